"""The gate decisions: who was admitted or rejected, by which rule, by whom and why. The words
are `gate`'s, `status`'s and the datasheet's ('rejected'); the JSON keeps its key `refused`."""

from __future__ import annotations

from annotate.protocol.gate import describe_closure
from annotate.report.cells import (
    Section,
)
from annotate.report.model.schema import (
    RosterEntry,
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single
from annotate.wording import count_of


def _aside(m: RosterEntry) -> str:
    """A roster member's set-aside labels, in words; admitted again, those kept aside (their
    items, or their batch, had no room for them when they were admitted)."""
    again = " (admitted again, kept aside: no room left)" if m.gate == "admitted" else ""
    return f"{m.name} {m.set_aside}{again}"


def _gate_section(r: StudyReport) -> Section:
    g = r.gate
    rows = [
        [
            d.annotator,
            "admitted" if d.admitted else "rejected",
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
    collected = r.datasheet.collected if r.datasheet is not None else None
    if not rows:
        # Labels imported from elsewhere: whoever screened the workers, it was not our gate.
        none = "(gate unknown)" if collected else "(no gate decisions recorded)"
        rows = [[none, "", "", "", "", "", "", "", ""]]
    title = f"Gate decisions: {len(g.admitted)} admitted, {len(g.refused)} rejected"
    aside = [m for m in g.roster if m.set_aside]
    if aside:
        n = sum(m.set_aside for m in aside)
        title += (
            f". {count_of(n, 'test label')} set aside by rejections, in no score or vote: "
            + ", ".join(_aside(m) for m in aside)
        )
    if g.closure is not None:
        title += f". {describe_closure(g.closure)}"
    headers = ["Annotator", "Decision", "Rule", "Threshold", "Score", "Items", "By", "At"]
    return title, [*headers, "Reason"], rows


SECTION = ReportSection("gate", single(_gate_section))
