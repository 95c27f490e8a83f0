"""What a report section is: its name, how its tables read (from the typed report), and, for a
section that is not part of the built-in report, how it is computed.

A computed section's data goes into the report's JSON under its name (after the built-in
keys) and its tables after the built-in ones it follows in the registry; the built-in
sections (`compute` None) are computed by `build` into the typed fields of `StudyReport`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from annotate.report.cells import Section
from annotate.report.model.schema import StudyReport

if TYPE_CHECKING:  # the report's data and aggregation (pandas) load when a report is built
    from sqlalchemy import Engine

    from annotate.report.aggregation.study import Aggregated
    from annotate.report.data.coding import CodedStudy
    from annotate.report.data.loading import StudyData


@dataclass(frozen=True)
class SectionInput:
    """What a computed section is computed from: the loaded study, its coded labels, the
    aggregation the report scores, the report built so far, and the store (None when the
    report is built from loaded data alone)."""

    data: StudyData
    coded: CodedStudy
    final: Aggregated
    report: StudyReport
    engine: Engine | None


@dataclass(frozen=True)
class ReportSection:
    name: str
    """The section's JSON key (a `StudyReport` field for the built-in sections)."""
    tables: Callable[[StudyReport], list[Section]]
    """The section's tables, from the report; [] when it has nothing to show."""
    compute: Callable[[SectionInput], Any] | None = None
    """Computes the section's data (a `ReportModel`, or None to leave it out), for a section
    that is not a field of `StudyReport`: stored in `StudyReport.extra_sections` under `name`."""


def single(
    table: Callable[[StudyReport], Section | None],
) -> Callable[[StudyReport], list[Section]]:
    """`tables` from a function that gives one table or None."""

    def tables(r: StudyReport) -> list[Section]:
        found = table(r)
        return [] if found is None else [found]

    return tables


def computed(name: str, r: StudyReport) -> Any:
    """A computed section's data in the report (None when left out)."""
    return r.extra_sections.get(name)
