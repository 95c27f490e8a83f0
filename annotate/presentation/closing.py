"""What the thank-you screen of a refused annotator says: the terminal app and the page show
the same paragraphs (the terminal adds its key, the page its buttons)."""

from __future__ import annotations

from annotate.protocol.session import Progress
from annotate.wording import count_of


def refusal_lines(progress: Progress) -> list[str]:
    """The paragraphs for an annotator the gate refused. Refused in the test phase, their
    answers are set aside (Progress.refused_in_test), and the screen says so plainly; the
    researcher's reason is a note for the study's records, never shown to them."""
    if progress.refused_in_test:
        return [
            "The researcher has ended your part in this study, and the answers you gave will "
            "not be used. There is nothing more to do here.",
            "We are grateful for the time you gave.",
        ]
    return [
        f"You completed {count_of(progress.training_done, 'training item')}; your answers "
        "are saved.",
        "This study will not need you for its test items, so there is nothing more to do "
        "here. We are grateful for the time you gave.",
    ]
