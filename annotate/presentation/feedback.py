"""After a training answer: right or wrong, the answer beside the gold one in the task's
words, the running accuracy and the gate's word."""

from __future__ import annotations

import math
from typing import Any

from annotate.presentation.item_layout import shown_fields
from annotate.presentation.verbatim import as_text
from annotate.protocol.answers import REGRESSION_TOLERANCE, describe
from annotate.protocol.session import Feedback, ItemView
from annotate.specs import TaskSpec
from annotate.terminal_text import SafeText as Text


def verdict(feedback: Feedback) -> str:
    """ "right", "wrong" or "none" (no gold)."""
    return "none" if feedback.correct is None else "right" if feedback.correct else "wrong"


def verdict_line(feedback: Feedback) -> Text:
    if feedback.correct is None:
        return Text("No gold label for this item.", style="bold")
    if feedback.correct:
        return Text("✓ Right", style="bold green")
    return Text("✗ Wrong", style="bold red")


def answer_lines(spec: TaskSpec, feedback: Feedback, answer: Any, item: ItemView) -> Text:
    """Your answer beside the gold one, in the words of the task."""
    if spec.kind == "multi_answer" and isinstance(feedback.gold, dict):
        lines = [Text("Your judgement and the right answer for each candidate:", style="bold")]
        for n, candidate in enumerate(item.fields.get("answers", []), start=1):
            idx = as_text(candidate["idx"])
            mine = spec.label_text(answer.get(idx, "")) if isinstance(answer, dict) else "?"
            gold = spec.label_text(feedback.gold.get(idx, ""))
            mark = "✓" if mine == gold else "✗"
            lines.append(
                Text.assemble(
                    f"{mark} {n:>2}. ",
                    Text(as_text(candidate["text"])),
                    f" — you: {mine}, right: {gold}",
                )
            )
        return Text("\n").join(lines)
    yours = Text.assemble(("Your answer: ", "bold"), Text(feedback.answer_text))
    yours.append_text(meaning(spec, item, answer))
    if spec.answer_scale:  # CB: the 7-point answer counts as one of the 3 classes
        yours.append(f" (counts as {spec.label_text(spec.collapse(str(answer)))})")
    gold = Text.assemble(("Right answer: ", "bold"), Text(feedback.gold_text))
    gold.append_text(meaning(spec, item, feedback.gold))
    if spec.answer_scale and feedback.gold is not None:  # CB: which points count as the gold
        gold.append(f" ({scale_points(spec, str(feedback.gold))})")
    if spec.kind == "regression":
        gold.append(f" (a rating within {REGRESSION_TOLERANCE:g} point counts as right)")
    return Text("\n").join([yours, gold])


def scale_points(spec: TaskSpec, label: str) -> str:
    """The answer-scale points that count as `label`, by number and name: "points 3-5
    (Leaning true, Unsure, Leaning false) count as Neutral"."""
    points = [p for p in spec.answer_scale if p.collapses_to == label]
    if not points:
        return f"no point counts as {spec.label_text(label)}"
    numbers = points[0].key if len(points) == 1 else f"{points[0].key}–{points[-1].key}"
    names = ", ".join(p.text for p in points)
    word = "point" if len(points) == 1 else "points"
    verb = "counts" if len(points) == 1 else "count"
    return f"{word} {numbers} ({names}) {verb} as {spec.label_text(label)}"


def meaning(spec: TaskSpec, item: ItemView, value: Any) -> Text:
    """What an answer stands for, after its name: the text of COPA's choice ("Choice 2" alone
    says nothing once the item is gone), the anchor of STS-B's nearest scale point."""
    if value is None:
        return Text("")
    if spec.scale is not None:
        point = min(max(math.floor(float(value) + 0.5), spec.scale.min), spec.scale.max)
        anchor = spec.scale.anchors[str(point)]
        nearest = "" if float(value) == point else f"nearest point {point}: "
        return Text.assemble(" — ", (nearest, "dim"), Text(anchor, style="italic"))
    if spec.layout == "choice":
        label = spec.label_text(str(value))
        for f in shown_fields(spec, item.fields):
            if f.label == label:  # the label "Choice 1" names the field "Choice 1"
                return Text.assemble(" — ", Text(as_text(item.fields[f.name]), style="italic"))
    return Text("")


def accuracy_line(feedback: Feedback) -> Text:
    right = round(feedback.training_accuracy * feedback.training_done)
    return Text(
        f"So far: {right} of {feedback.training_done} right ({feedback.training_accuracy:.0%})"
    )


def gate_line(feedback: Feedback) -> Text | None:
    if feedback.gate_decided is True:
        return Text(
            "You passed the training: the gate admits you to the test items (they come "
            "without feedback).",
            style="bold green",
        )
    if feedback.gate_decided is False:
        return Text("You have finished training.", style="bold")
    return None


def _score(spec: TaskSpec, value: Any) -> str | None:
    """A score as a score on its scale (STS-B's "0" alone reads like a class label)."""
    if spec.kind == "regression" and value is not None and spec.scale is not None:
        return f"{describe(spec, value)} on the scale {spec.scale.min}–{spec.scale.max}"
    return None


def previous_answer(spec: TaskSpec, value: Any) -> str:
    """The answer being revised, as the revise banner says it: a score as a score on its
    scale, anything else by its name."""
    score = _score(spec, value)
    return f"your score was {score}" if score else f"it was: {describe(spec, value)}"


def revised_answer(spec: TaskSpec, value: Any) -> str:
    """The notice once a previous answer is changed, in the banner's words."""
    score = _score(spec, value)
    return (
        f"Previous answer changed to: {f'a score of {score}' if score else describe(spec, value)}"
    )
