"""The gate decisions: who was admitted or refused, by which rule, by whom and why."""

from __future__ import annotations

from annotate.protocol.gate import describe_closure
from annotate.report.cells import (
    Section,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _gate_section(r: StudyReport) -> Section:
    g = r.gate
    rows = [
        [
            d.annotator,
            "admitted" if d.admitted else "refused",
            d.rule,
            "–" if d.threshold is None else f"{d.threshold:.3f}",
            "–" if d.score is None else f"{d.score:.3f}",
            str(d.n_items),
            d.decided_by,
            d.decided_at,
            d.reason or "not recorded",
        ]
        for d in g.decisions
    ]
    if not rows:
        rows = [["(no gate decisions recorded)", "", "", "", "", "", "", "", ""]]
    title = f"Gate decisions: {len(g.admitted)} admitted, {len(g.refused)} refused"
    if g.closure is not None:
        title += f". {describe_closure(g.closure)}"
    headers = ["Annotator", "Decision", "Rule", "Threshold", "Score", "Items", "By", "At"]
    return title, [*headers, "Reason"], rows


SECTION = ReportSection("gate", single(_gate_section))
