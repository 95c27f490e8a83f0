"""`--values`: how the answers of a label file become the task's labels.

`'entailment=1,not_entailment=0'` names, for each label, the raw answer that means it (either
side may be the label); `'0-33=contradiction,34-66=neutral,67-100=entailment'` bins a graded
answer (a slider) into classes, each range inclusive at both ends. Without `--values` an answer
must be one of the task's labels (case does not matter) or a point of its answer scale. A
rating task (STS-B) keeps numbers as numbers, within the task's scale."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from annotate.errors import UserError
from annotate.specs import TaskSpec

RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass
class ValueMap:
    spec: TaskSpec
    exact: dict[str, str] = field(default_factory=dict)
    """Raw answer (lower case) -> label."""
    bins: list[tuple[float, float, str]] = field(default_factory=list)
    text: str | None = None

    def __call__(self, raw: Any) -> tuple[Any, str | None]:
        """(stored value, None) or (None, the reason the answer has no label)."""
        text = str(raw).strip()
        if self.spec.kind == "regression":
            return self._rating(text)
        if text.lower() in self.exact:
            return self.exact[text.lower()], None
        if self.bins:
            try:
                number = float(text)
            except ValueError:
                return None, f"answer {text!r} is not a number to bin ({self.text})"
            for low, high, label in self.bins:
                if low <= number <= high:
                    return label, None
            return None, f"answer {text!r} falls in no bin of --values {self.text!r}"
        if self.text:
            known = ", ".join(sorted(self.exact))
            return None, f"answer {text!r} is not in --values (answers mapped: {known})"
        return None, (
            f"answer {text!r} is not a {self.spec.name} label "
            f"({', '.join(self.spec.label_values())}{self._scale_text()}): "
            "map answers with --values"
        )

    def _scale_text(self) -> str:
        points = [o.value for o in self.spec.answer_scale]
        return f", or a point of its answer scale: {', '.join(points)}" if points else ""

    def _rating(self, text: str) -> tuple[Any, str | None]:
        if text.lower() in self.exact:
            text = self.exact[text.lower()]
        try:
            number = float(text)
        except ValueError:
            return None, f"rating {text!r} is not a number"
        scale = self.spec.scale
        if not math.isfinite(number) or (
            scale is not None and not scale.min <= number <= scale.max
        ):
            where = f"{scale.min:g}..{scale.max:g}" if scale is not None else "a finite number"
            return None, f"rating {text!r} is outside {where}"
        return number, None


def value_map(spec: TaskSpec, text: str | None) -> ValueMap:
    """Parse `--values` for `spec` (a UserError names the part that does not parse)."""
    if spec.kind not in {"classification", "regression"}:
        raise UserError(
            f"import-labels takes classification and rating tasks; {spec.name} is {spec.kind}"
        )
    mapping = ValueMap(spec, text=text)
    labels = spec.label_values()
    lowered = {v.lower(): v for v in labels}
    if spec.kind == "classification":
        mapping.exact = dict(lowered)  # a label answers for itself
        # A point of the task's answer scale (CB's 1-7) is kept as the point, as the annotator
        # screens store it: the report collapses it and takes α on the scale.
        mapping.exact.update({o.value.lower(): o.value for o in spec.answer_scale})
    if not text:
        return mapping
    mapping.exact = {}
    for part in (p for p in text.split(",") if p.strip()):
        left, sep, right = (s.strip() for s in part.partition("="))
        if not sep or not left or not right:
            raise UserError(f"--values {part!r}: expected LABEL=ANSWER or LOW-HIGH=LABEL")
        if spec.kind == "regression":
            mapping.exact[left.lower()] = right
            continue
        left_label, right_label = lowered.get(left.lower()), lowered.get(right.lower())
        if left_label and right_label:
            raise UserError(f"--values {part!r}: both sides are {spec.name} labels")
        if not left_label and not right_label:
            raise UserError(
                f"--values {part!r}: neither side is a {spec.name} label ({', '.join(labels)})"
            )
        label, raw = (left_label, right) if left_label else (right_label, left)
        assert label is not None
        match = RANGE.match(raw)
        if match:
            low, high = float(match.group(1)), float(match.group(2))
            if low > high:
                raise UserError(f"--values {part!r}: the range runs backwards")
            for other_low, other_high, other in mapping.bins:
                if low <= other_high and other_low <= high:
                    raise UserError(
                        f"--values {part!r} overlaps {other_low:g}-{other_high:g}={other}"
                    )
            mapping.bins.append((low, high, label))
        else:
            if raw.lower() in mapping.exact:
                raise UserError(f"--values maps answer {raw!r} twice")
            mapping.exact[raw.lower()] = label
    return mapping
