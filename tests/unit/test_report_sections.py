"""The report's section registry: every section module is listed once, and a section added as
one module plus its registry line reaches the JSON and every rendered view."""

from __future__ import annotations

import pkgutil

import numpy as np

from annotate.report import sections as sections_package
from annotate.report.build import study_report
from annotate.report.cells import Section
from annotate.report.model.base import ReportModel
from annotate.report.model.schema import StudyReport
from annotate.report.render.html import render_html
from annotate.report.render.markdown import render_markdown
from annotate.report.sections import registry
from annotate.report.sections.base import ReportSection, SectionInput, computed
from annotate.simulate import simulate
from tests.engine_helpers import rte_study


def test_every_section_module_is_in_the_registry_once():
    defining = {
        m.name
        for m in pkgutil.iter_modules(sections_package.__path__)
        if hasattr(__import__(f"annotate.report.sections.{m.name}", fromlist=["x"]), "SECTION")
    }
    assert sorted(registry.NAMES) == sorted(defining)
    names = [s.name for s in registry.SECTIONS]
    assert len(names) == len(set(names))
    # The built-in sections read typed fields of the report; none is computed on the side.
    report_fields = set(StudyReport.model_fields)
    for section in registry.SECTIONS:
        assert section.compute is None
        assert section.name in report_fields | {"study", "scores", "protocol"}


class Spread(ReportModel):
    labels: dict[str, int]


def _spread(given: SectionInput) -> Spread:
    coded = given.coded
    n = np.bincount(coded.label_annotator, minlength=len(coded.annotators))
    return Spread(labels={a: int(k) for a, k in zip(coded.annotators, n, strict=True)})


def _spread_tables(r: StudyReport) -> list[Section]:
    data = computed("label_spread", r)
    if data is None:
        return []
    return [
        (
            "Labels per annotator",
            ["Annotator", "Labels"],
            [[a, str(k)] for a, k in data.labels.items()],
        )
    ]


def test_a_new_section_reaches_the_json_and_every_view(workspace, tmp_path, monkeypatch):
    added = ReportSection("label_spread", _spread_tables, _spread)
    monkeypatch.setattr(registry, "SECTIONS", (*registry.SECTIONS, added))
    monkeypatch.setattr("annotate.report.build.SECTIONS", registry.SECTIONS)
    monkeypatch.setattr("annotate.report.render.table.SECTIONS", registry.SECTIONS)
    rte_study(workspace.engine, tmp_path, name="spread", test=10)
    simulate(workspace.engine, "spread", 3, 0.9, seed=2)
    report = study_report(workspace.engine, "spread", bootstrap=0)
    data = report.to_json()
    assert list(data)[-1] == "label_spread"  # after every built-in key
    assert sum(data["label_spread"]["labels"].values()) == data["n_labels"]
    assert "extra_sections" not in data
    text = render_markdown(report)
    assert "## Labels per annotator" in text
    assert text.index("## Labels per annotator") > text.index("## Effective protocol")
    assert "Labels per annotator" in render_html(report)


def test_without_the_section_the_json_keeps_its_keys(workspace, tmp_path):
    rte_study(workspace.engine, tmp_path, name="plain", test=6)
    simulate(workspace.engine, "plain", 3, 0.9, seed=3)
    data = study_report(workspace.engine, "plain", bootstrap=0).to_json()
    assert "extra_sections" not in data and "label_spread" not in data


def test_every_section_reads_a_study_without_labels(workspace, tmp_path):
    # No labels yet: every section gives its tables (or none) without failing.
    rte_study(workspace.engine, tmp_path, name="empty", test=4)
    report = study_report(workspace.engine, "empty", bootstrap=0)
    shown = [t for s in registry.SECTIONS for t in s.tables(report)]
    assert [title for title, _, _ in shown][:1] == ["Study"]
    assert all(title for title, _, _ in shown)


def test_the_report_and_study_show_give_the_same_catch_threshold(workspace, tmp_path, cli):
    """Unset, `catch_min_accuracy` is the threshold the drift rule applies (here the gate's):
    the report's effective protocol says so, as `study show` does, not the stored None."""
    rte_study(workspace.engine, tmp_path, name="drift", test=6)
    simulate(workspace.engine, "drift", 3, 0.9, seed=3)
    shown = cli("study", "show", "drift", "--format", "json").json()["protocol"]
    assert (shown["catch_min_accuracy"], shown["catch_min_accuracy_from"]) == (
        0.5,
        "gate threshold",
    )
    text = render_markdown(study_report(workspace.engine, "drift", bootstrap=0))
    protocol = text[text.index("## Effective protocol") :]
    assert "| catch_min_accuracy | 0.5 |" in protocol
    assert "| catch_min_accuracy_from | gate threshold |" in protocol
