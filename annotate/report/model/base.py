"""The base of the report's dataclasses: their JSON form (`to_json()`), with the fields a
report leaves out and the key order the JSON has always had."""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """Plain JSON types only: dataclasses become objects (without their omitted fields), NaN
    becomes null, numpy numbers become Python numbers."""
    if isinstance(value, str | int | bool) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        skip = value.omitted() if isinstance(value, JsonData) else set()
        names = [f.name for f in fields(value) if f.name not in skip]
        order = value.key_order() if isinstance(value, JsonData) else None
        if order is not None:
            names = [n for n in order if n in names]
        out = {n: plain(getattr(value, n)) for n in names}
        if isinstance(value, JsonData):
            out.update({k: plain(v) for k, v in value.extra_keys().items()})
        return out
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class JsonData:
    """Base of the report's dataclasses: `to_json()` and the fields a report leaves out."""

    def omitted(self) -> set[str]:
        return set()

    def key_order(self) -> list[str] | None:
        """The JSON's key order where it is not the fields' order (kept as it always was)."""
        return None

    def extra_keys(self) -> dict[str, Any]:
        """Keys written after the fields' (a report's computed sections)."""
        return {}

    def to_json(self) -> dict[str, Any]:
        return plain(self)


def _none(obj: object, *names: str) -> set[str]:
    """The fields among `names` that are None (left out of the JSON)."""
    return {n for n in names if getattr(obj, n) is None}
