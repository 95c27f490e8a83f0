"""What the thank-you screen of a refused annotator says, and the last words to an annotator
who leaves: the terminal app and the page say the same (the terminal adds its key, the page
its buttons)."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError

from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession, Phase, Progress
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


NOTHING_MORE = "There is nothing more for you to do in this study."


def unless_admitted(come_back: str) -> str:
    """The goodbye of a trainee the gate refused: the researcher may still admit them by hand
    (`annotate gate --admit`), and then they continue, with the test items."""
    return (
        "There is nothing more for you to do in this study unless the researcher admits you to "
        f"its test items after all; if they tell you so, {come_back} to continue."
    )


def goodbye(more_to_come: bool, come_back: str, progress: Progress | None = None) -> str:
    """What an annotator who leaves is told after their answers are said to be saved: how to
    continue where they stopped (`come_back`: "run the same command later", "open this page
    again later"), or, refused or with no item left for them
    (AnnotatorSession.more_to_come), that there is nothing to continue; refused after training
    (their `progress`), nothing unless the researcher admits them after all."""
    if progress is not None and progress.phase is Phase.REJECTED and not progress.refused_in_test:
        return unless_admitted(come_back)
    if not more_to_come:
        return NOTHING_MORE
    return f"{come_back[:1].upper()}{come_back[1:]} to continue where you stopped."


def leaving_words(
    name: str, study: str, progress: Progress, more_to_come: bool, come_back: str
) -> list[str]:
    """The last words to an annotator who leaves: what is saved, then `goodbye`. `annotate
    label` prints them once its screen has closed; a browser tab of `annotate serve
    --terminal` shows them as it closes (web/app.py)."""
    training = count_of(progress.training_done, "training answer")
    test = count_of(progress.stream_done, "test answer")
    return [
        f"{name}: {training} and {test} saved in study {study!r}.",
        goodbye(more_to_come, come_back, progress),
    ]


ELSEWHERE = "You went on in another window, which holds your place: continue there."
"""The goodbye of a window a newer one took over: "open it again later" would send the
annotator to a third window while the second is open."""


def words_on_leaving(
    name: str,
    session: AnnotatorSession,
    study: str,
    come_back: str,
    *,
    elsewhere: bool = False,
    dropped: str | None = None,
) -> list[str]:
    """`leaving_words` for `name`, the annotator of `session`, their counts read from the store
    as they leave (`elsewhere`: this window was taken over by a newer one, ELSEWHERE). A store
    that cannot be read then (unreachable, gone, locked) does not keep them from leaving: they
    are told, without counts, that what they answered is saved (an answer is acknowledged once
    it is stored) and how to continue. `dropped`: the answer given while the store was away
    that they chose to leave unsaved (described), said as not saved."""
    unsaved = [UNSAVED.format(answer=dropped)] if dropped else []
    try:
        progress = session.progress()
        more_to_come = session.more_to_come(progress)
    except (DBAPIError, UserError):
        before = " before your last one" if dropped else ""
        return [
            f"{name}: every answer you gave{before} was saved in study {study!r} as you gave it.",
            *unsaved,
            ELSEWHERE if elsewhere else goodbye(True, come_back),
        ]
    words = leaving_words(name, study, progress, more_to_come, come_back)
    return [words[0], *unsaved, ELSEWHERE if elsewhere else words[1]]


UNSAVED = "Your last answer ({answer}) was not saved: the store could not be reached."
