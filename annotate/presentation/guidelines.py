"""The task's guidelines as the annotator reads them: rewrapped, with the label-prior hint
and a sentence on where they stand."""

from __future__ import annotations

import re

from annotate.protocol.session import Phase, Progress
from annotate.specs import ProtocolSpec, TaskSpec
from annotate.wording import count_of

PRIOR_HINTS = {
    "balanced": "Labels in this task are roughly balanced: each answer is about as common "
    "as the others.",
    "skewed": "Labels in this task are skewed: some answers are much more common than others.",
}
"""The GLUE FAQ told annotators whether a task's labels were balanced; "unknown" says nothing."""


LIST_ITEM = re.compile(r"([-*•]|\d+[.)])\s")


def reflow(guidelines: str) -> str:
    """The spec's guidelines rewrapped: the TOML files are hard-wrapped at ~95 columns, which on
    an 80-column terminal leaves a stray word on every other line. Paragraphs and list items
    keep their own lines; only the breaks inside them go."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", guidelines.strip()):
        lines: list[str] = []
        for line in paragraph.splitlines():
            stripped = line.strip()
            if lines and not LIST_ITEM.match(stripped):
                lines[-1] += " " + stripped
            else:
                lines.append(stripped)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def prior_hint(spec: TaskSpec, protocol: ProtocolSpec) -> str | None:
    if not protocol.label_prior_hint:
        return None
    return PRIOR_HINTS.get(spec.label_prior)


def where_you_are(progress: Progress, protocol: ProtocolSpec) -> str:
    if progress.phase is Phase.TRAINING:
        if progress.training_done:
            return (
                f"Welcome back: you have done {progress.training_done} of "
                f"{count_of(progress.training_quota, 'training item')}."
            )
        feedback = (
            "after each one you will see the right answer"
            if protocol.training_feedback
            else "you will not see the right answers"
        )
        return (
            f"You start with {count_of(progress.training_quota, 'training item')}: {feedback}. "
            "Then come the test items, without feedback."
        )
    if progress.stream_done:
        return (
            "Welcome back: you are in the test phase "
            f"({count_of(progress.stream_done, 'item')} done). "
            "There is no feedback on test items."
        )
    if progress.phase is Phase.TEST or progress.training_quota == 0:
        return "You start with the test items. There is no feedback on them."
    return "You have finished training."
