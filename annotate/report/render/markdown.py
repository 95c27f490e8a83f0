"""The Markdown view of a report, for a paper or a README: pipe tables of the same sections as
the terminal's (`sections.registry`), cells escaped so data text cannot make markup."""

from __future__ import annotations

import re
from collections.abc import Sequence

from annotate.report.model.schema import StudyReport
from annotate.report.render.table import interval_lines, sections
from annotate.report.sections.agreement import item_agreement_section

_INERT = re.compile(r"[\\`*~|]|\](?=[(\[])|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
"""What would make markup in a cell: a backslash, a code span's backtick, emphasis (`*`, `~`,
and `_` not inside a word, where it never does: `catch_min_accuracy` stays as written), a
link's `](` or `][` (an interval's `[1, 2]` stays) and the table's own pipe."""


def _md_cell(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace("\r", " ").replace("\n", " ")
    return _INERT.sub(lambda m: "\\" + m.group(), text)


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    heads = [_md_cell(h) or " " for h in headers]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_code(text: str) -> str:
    """Text from data or people as a code span, shown exactly: nothing is parsed inside one,
    so it is not escaped (an escape would show as typed); its fence is one backtick longer
    than the longest run in the text (CommonMark), and a line break becomes a space."""
    text = text.replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


markdown_cell = _md_cell
"""A cell of text from data or people, escaped so it cannot make markup."""
markdown_table = _md_table
"""A pipe table of escaped cells."""


def render_markdown(report: StudyReport) -> str:
    """The report for a paper or a README: a heading, the quotable line, then pipe tables."""
    lines = [f"# Human performance: {_md_cell(report.study)} ({_md_cell(report.task)})", ""]
    lines += [f"> {_md_cell(report.summary)}", ""]
    lines += [_md_cell(line) + "  " for line in interval_lines(report)]
    lines += [""] if report.headline_interval or report.humans_interval else []
    histogram = item_agreement_section(report.agreement)
    for title, headers, rows in sections(report):
        lines += [f"## {_md_cell(title)}", ""]
        lines += _md_table(headers, rows)
        lines.append("")
        if title == "Agreement" and histogram:
            lines += [f"{_md_cell(histogram[0])}:", ""]
            lines += _md_table(histogram[1], histogram[2])
            lines.append("")
    if report.notes:
        lines += ["## Notes", ""] + [f"- {_md_cell(n)}" for n in report.notes] + [""]
    return "\n".join(lines)
