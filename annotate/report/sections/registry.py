"""The report's sections, in the order every view shows them (rich table, Markdown, HTML).
Adding a section is one module in this package that defines its `SECTION` (see `base`), plus
its name here."""

from __future__ import annotations

from importlib import import_module

from annotate.report.sections.base import ReportSection

NAMES = (
    "study",
    "scores",
    "confusion",
    "annotators",
    "curve",
    "agreement",
    "model_aggregation",
    "catch",
    "ties",
    "early_stop",
    "diagnostics",
    "models",
    "suspects",
    "gate",
    "benchmark",
    "protocol",
    "datasheet",
    "flags",
)
"""The section modules of this package, in the report's order."""

SECTIONS: tuple[ReportSection, ...] = tuple(
    import_module(f"{__package__}.{name}").SECTION for name in NAMES
)
