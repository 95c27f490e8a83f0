"""The report's sections, in the order every view shows them (rich table, Markdown, HTML).
Adding a section is one module in this package that defines its `SECTION` (see `base`), plus
its line here."""

from __future__ import annotations

from annotate.report.sections import (
    agreement,
    annotators,
    benchmark,
    catch,
    confusion,
    curve,
    datasheet,
    diagnostics,
    early_stop,
    flags,
    gate,
    model_aggregation,
    models,
    protocol,
    scores,
    study,
    suspects,
    ties,
)
from annotate.report.sections.base import ReportSection

SECTIONS: tuple[ReportSection, ...] = (
    study.SECTION,
    scores.SECTION,
    confusion.SECTION,
    annotators.SECTION,
    curve.SECTION,
    agreement.SECTION,
    model_aggregation.SECTION,
    catch.SECTION,
    ties.SECTION,
    early_stop.SECTION,
    diagnostics.SECTION,
    models.SECTION,
    suspects.SECTION,
    gate.SECTION,
    benchmark.SECTION,
    protocol.SECTION,
    datasheet.SECTION,
    flags.SECTION,
)
