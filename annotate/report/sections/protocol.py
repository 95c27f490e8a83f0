"""The effective protocol as stored with the study."""

from __future__ import annotations

from typing import Any

from annotate.report.cells import (
    Section,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _protocol_section(r: StudyReport) -> Section:
    p = r.protocol
    rows = [
        [k, _value(v)]
        for k, v in p.items()
        if k not in {"assumptions", "task_overrides", "description"}
    ]
    for a in p.get("assumptions", []) or []:
        rows.append(["assumption", a])
    return "Effective protocol", ["Setting", "Value"], rows


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict | list):
        return (
            ", ".join(f"{a}={b}" for a, b in v.items())
            if isinstance(v, dict)
            else ", ".join(map(str, v))
        )
    return str(v)


SECTION = ReportSection("protocol", single(_protocol_section))
