"""The report as one self-contained HTML file (`--format html`): the headline, the scores with
intervals, the figures as inline SVG, every table of the terminal report (agreement, gate
decisions, ties, flagged and excluded items, the datasheet). It loads nothing: no script, no
outside style sheet, font or image, so it opens offline and can be archived beside a paper.

Every text from data or people (study and annotator names, item ids, comments, labels) is
HTML-escaped. Without matplotlib the tables are all there and a note names the missing figures."""

from __future__ import annotations

import html
from collections.abc import Sequence

from annotate.report.cells import Section
from annotate.report.model.schema import BenchmarkReport, StudyReport
from annotate.report.render.benchmark import benchmark_sections
from annotate.report.render.figures import EXTRA_HINT, figure_specs, inline_svgs
from annotate.report.render.table import interval_lines, sections
from annotate.report.sections.agreement import item_agreement_section
from annotate.report.sections.datasheet import datasheet_sections

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem;
       color: #1b1b1b; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin-top: 1.5rem; }
.headline { font-size: 1.1rem; font-weight: 600; background: #eef3f8; padding: .6rem .8rem;
            border-left: 4px solid #1f4e79; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .85rem; }
th, td { border-bottom: 1px solid #d0d0d0; padding: .2rem .6rem; text-align: left;
         vertical-align: top; }
th { border-bottom: 2px solid #555; }
figure { margin: 1rem 0; } figcaption { font-weight: 600; font-size: .9rem; }
figure svg { max-width: 100%; height: auto; }
.note { color: #5a5a5a; font-size: .9rem; }
.published { color: #5a5a5a; font-style: italic; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], level: int = 2
) -> str:
    out = [f"<h{level}>{_e(title)}</h{level}>", "<table>"]
    if any(headers):
        out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _figures(report: StudyReport | BenchmarkReport) -> str:
    titles = [f.title for f in figure_specs(report)]
    if not titles:
        return ""
    out = ["<h2>Figures</h2>"]
    svgs = inline_svgs(report)
    if svgs is None:
        out.append(
            f'<p class="note missing-figures">These figures need matplotlib ({_e(EXTRA_HINT)}): '
            + ", ".join(_e(t) for t in titles)
            + ". Every number they show is in the tables below.</p>"
        )
        return "\n".join(out)
    for title, svg in svgs.items():
        # The SVG is matplotlib's output for our data: its text nodes were escaped by matplotlib.
        out.append(f"<figure><figcaption>{_e(title)}</figcaption>\n{svg}\n</figure>")
    return "\n".join(out)


def _page(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def study_html(r: StudyReport) -> str:
    body = [
        f"<h1>Human performance: {_e(r.study)} ({_e(r.task)}: {_e(r.task_title)})</h1>",
        f'<p class="headline">{_e(r.summary)}</p>',
        *(f"<p>{_e(line)}</p>" for line in interval_lines(r)),
    ]
    found = sections(r)
    # scores first (the table a reader looks for), then the figures, then everything else
    first = [s for s in found if s[0].startswith("Scores")]
    rest = [s for s in found if s not in first]
    body += [_table(*s) for s in first]
    body.append(_figures(r))
    histogram = item_agreement_section(r.agreement)
    for title, headers, rows in rest:
        body.append(_table(title, headers, rows))
        if title == "Agreement" and histogram:
            body.append(_table(*histogram, 3))
    if r.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in r.notes) + "</ul>")
    return _page(f"Human performance: {r.study}", body)


def benchmark_html(r: BenchmarkReport) -> str:
    body = [
        f"<h1>Human row: {_e(r.benchmark)}</h1>",
        f'<p class="headline">{_e(r.summary)}</p>',
    ]
    found: list[Section] = benchmark_sections(r)
    body += [_table(*found[0])]
    body.append(_figures(r))
    for title, headers, rows in found[1:]:
        body.append(_table(title, headers, rows))
    if r.published is not None:
        body.append(f'<p class="published">{_e(r.published.note)}</p>')
    for t in [*r.tasks, *r.diagnostics]:
        body.append(f"<h2>{_e(t.task)}: study {_e(t.study)}</h2>")
        body.append(f'<p class="headline">{_e(t.summary)}</p>')
        if t.datasheet is not None:
            for title, headers, rows in datasheet_sections(t.datasheet):
                body.append(_table(title, headers, rows, 3))
    if r.notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in r.notes) + "</ul>")
    return _page(f"Human row: {r.benchmark}", body)


def render_html(report: StudyReport | BenchmarkReport) -> str:
    if isinstance(report, BenchmarkReport):
        return benchmark_html(report)
    return study_html(report)
