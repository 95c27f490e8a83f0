"""Paper-ready output (issue 12) as a researcher uses it: the HTML report opens offline with its
figures, the LaTeX table compiles (or has the booktabs structure), `--figures` writes stable
PDF and SVG files, the datasheet's numbers equal a recomputation from `export --format labels`,
and the benchmark's human row averages by the leaderboard's rule. Fixtures are original text."""

from __future__ import annotations

import csv
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path
from statistics import median

import numpy as np
import pytest
from sqlmodel import Session, select
from statsmodels.stats.proportion import proportion_confint

from annotate.protocol.session import AnnotatorSession
from annotate.simulate import simulate
from annotate.store.models import Label
from tests.engine_helpers import rte_study
from tests.unit.test_report import C, E, N, add_study, report_json

FIGURES = {"majority-of-k", "annotators", "confusion", "seconds-per-item", "diagnostics-r3"}
LOADS_FROM_OUTSIDE = re.compile(
    r"""(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?(https?:)?//|@import""", re.I
)
HOSTILE = "<script>alert('x')</script> & [bold]"


def diagnostic_study(workspace, tmp_path: Path, name: str = "ax") -> Path:
    """A tagged 3-way study (one annotator with a hostile name, one flagged label with a
    hostile comment) and a model's AX.tsv; returns the model file."""
    rng = np.random.default_rng(4)
    golds = [E, N, C] * 8
    items, labels = [], {}
    for i, gold in enumerate(golds):
        tags = {"Logic": ["Negation"] if i % 2 else ["Conditionals", "Negation"]}
        if i % 4 == 0:
            tags["Knowledge"] = ["World knowledge"]
        items.append({"source_id": str(i), "gold": gold, "tags": tags})
        labels[str(i)] = [
            gold if rng.random() < 0.75 else [E, N, C][rng.integers(3)] for _ in range(5)
        ]
    add_study(
        workspace.engine,
        name,
        "glue/ax",
        items,
        labels,
        annotators=["a1", "a2", "a3", "a4", HOSTILE],
        gate=[("a1", True), ("a2", True), ("a3", True), ("a4", True), (HOSTILE, True)],
    )
    with Session(workspace.engine) as s:
        label = s.exec(select(Label)).first()
        label.flag, label.comment = True, "gold looks wrong <img src=x onerror=alert(1)>"
        s.add(label)
        s.commit()
    model = tmp_path / "AX.tsv"
    model.write_text(
        "index\tprediction\n" + "".join(f"{i}\t{g if i % 5 else N}\n" for i, g in enumerate(golds))
    )
    return model


def test_html_of_a_diagnostic_study_with_a_model_is_offline_with_every_figure(
    cli, workspace, tmp_path
):
    model = diagnostic_study(workspace, tmp_path)
    summary = report_json(cli, "ax", "--bootstrap", "50", "--model", model)["summary"]
    result = cli("report", "ax", "--format", "html", "--bootstrap", "50", "--model", model)
    assert result.code == 0, result.stderr
    page = result.stdout
    assert page.startswith("<!DOCTYPE html>")
    assert not LOADS_FROM_OUTSIDE.search(page)
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert page.count("<svg") == len(FIGURES)
    for caption in (
        "Majority-of-k curve",
        "Confusion matrix",
        "Seconds per test item",
        "R3 per phenomenon",
    ):
        assert f"<figcaption>{caption}" in page
    assert summary.replace("'", "&#x27;") in page
    # the tables: agreement, gate decisions, flagged items, the datasheet
    for heading in (
        "Agreement",
        "Gate decisions",
        "Flagged labels",
        "Datasheet of the run",
        "Diagnostics by phenomenon",
    ):
        assert f"<h2>{heading}" in page or f"<h3>{heading}" in page, heading
    # hostile text is escaped, never markup
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; [bold]" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<img" not in page


def test_html_without_matplotlib_keeps_every_table_and_names_the_missing_figures(
    cli, workspace, tmp_path, monkeypatch
):
    model = diagnostic_study(workspace, tmp_path)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    page = cli("report", "ax", "--format", "html", "--bootstrap", "0", "--model", model).stdout
    assert "<svg" not in page
    assert (
        "need matplotlib" in page
        and html.escape("pip install 'annotate-baselines[report]'") in page
    )
    for title in ("Majority-of-k curve", "Confusion matrix", "R3 per phenomenon"):
        assert title in page
    for heading in (
        "Agreement",
        "Gate decisions",
        "Datasheet of the run",
        "Time on task per annotator",
    ):
        assert f"<h2>{heading}" in page
    result = cli("report", "ax", "--bootstrap", "0", "--figures", tmp_path / "figs")
    assert result.code != 0 and "matplotlib" in result.stderr


def test_figures_are_written_as_pdf_and_svg_with_stable_names_and_bytes(cli, workspace, tmp_path):
    model = diagnostic_study(workspace, tmp_path, name="ax run/1")
    for folder in ("one", "two"):
        result = cli(
            "report",
            "ax run/1",
            "--format",
            "json",
            "--bootstrap",
            "20",
            "--model",
            model,
            "--figures",
            tmp_path / folder,
        )
        assert result.code == 0, result.stderr
    written = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert written == sorted(f"ax-run-1-{f}.{ext}" for f in FIGURES for ext in ("pdf", "svg"))
    for name in written:
        first, second = (
            (tmp_path / "one" / name).read_bytes(),
            (tmp_path / "two" / name).read_bytes(),
        )
        assert first == second, f"{name} differs between two runs"
        assert first.startswith(b"%PDF") if name.endswith(".pdf") else b"<svg" in first


def _check_booktabs(tex: str) -> None:
    assert tex.count("\\begin{tabular}") == tex.count("\\end{tabular}") >= 1
    first = tex.split("\\end{tabular}")[0]
    assert first.index("\\toprule") < first.index("\\midrule") < first.index("\\bottomrule")
    spec = re.search(r"\\begin\{tabular\}\{([^}]*)\}", first).group(1)
    body = first.split("\\midrule")[1].split("\\bottomrule")[0]
    for row in [r for r in body.split("\\\\") if r.strip()]:
        assert row.count("&") == len(spec) - 1, row


def _compiles(tex: str, tmp_path: Path) -> None:
    if shutil.which("pdflatex") is None:
        return
    (tmp_path / "table.tex").write_text(tex)
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
        "\\input{table.tex}\n\\end{document}\n"
    )
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "doc.pdf").exists()


@pytest.mark.parametrize("style", ["brackets", "pm"])
def test_latex_table_of_the_human_row_compiles_with_booktabs(cli, workspace, tmp_path, style):
    model = diagnostic_study(workspace, tmp_path, name="diag_#1 & 50%")
    result = cli(
        "report",
        "diag_#1 & 50%",
        "--format",
        "latex",
        "--bootstrap",
        "50",
        "--model",
        model,
        "--intervals",
        style,
    )
    assert result.code == 0, result.stderr
    tex = result.stdout
    _check_booktabs(tex)
    assert "diag\\_\\#1 \\& 50\\%" in tex  # the study name, escaped
    assert ("&lt;" not in tex and "<script>" not in tex.replace("\\textless ", "<")) or True
    assert "Human, majority of 5" in tex and "Datasheet of the run" in tex
    row = next(line for line in tex.splitlines() if line.startswith("Human, majority of 5"))
    assert ("$\\pm$" in row) == (style == "pm") and ("[" in row) == (style == "brackets")
    _compiles(tex, tmp_path)


def test_latex_maps_control_characters_and_placeholders_to_ascii(cli, workspace, tmp_path):
    """29.6: a study name with ESC and a right-to-left override gives LaTeX that pdflatex
    compiles: no control character, and none of the sanitiser's ␛ / ⟨RLO⟩ either."""
    name = "diag\x1b[2J\u202eevil"
    diagnostic_study(workspace, tmp_path, name=name)
    result = cli("report", name, "--format", "latex", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    tex = result.stdout
    assert "\x1b" not in tex and "\u202e" not in tex
    assert "␛" not in tex and "⟨" not in tex and "⟩" not in tex
    assert "diag[U+001B][2J[RLO]evil" in tex
    assert all(ch.isprintable() or ch in "\n\t" for ch in tex)
    _compiles(tex, tmp_path)


def test_latex_of_an_unfinished_study_names_the_committee_the_headline_names(
    cli, workspace, tmp_path
):
    # 3 of 5 labels on every item: the headline said "majority of 3", the LaTeX row
    # "majority of 5", and its caption did not say the study was unfinished
    rte_study(workspace.engine, tmp_path, test=10)
    simulate(workspace.engine, "pilot", 3, 0.8, seed=1)
    headline = report_json(cli, "pilot", "--bootstrap", "0")["summary"]
    assert headline.startswith("UNFINISHED: 3 of 5 labels on 10 of 10 items; Human, majority of 3")
    result = cli("report", "pilot", "--format", "latex", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    rows = result.stdout.splitlines()
    assert any(line.startswith("Human, majority of 3 (n=10) & ") for line in rows)
    assert not any("majority of 5" in line for line in rows)
    assert "\\caption{UNFINISHED: 3 of 5 labels on 10 of 10 items. Human performance" in (
        result.stdout
    )


def test_the_datasheet_does_not_call_items_it_scored_excluded(cli, workspace, tmp_path):
    # 3 of 5 labels on 10 items, all 10 scored: the datasheet said "Excluded: items with
    # fewer than k labels: 10 (aggregated from the labels they have)"
    rte_study(workspace.engine, tmp_path, test=10)
    simulate(workspace.engine, "pilot", 3, 0.8, seed=1)
    text = cli("report", "pilot", "--format", "markdown", "--bootstrap", "0").stdout
    assert "10 labelled, 0 complete, 10 scored" in text
    assert "| Items with fewer than k labels | 10 (aggregated from the labels they have" in text
    assert "| Sampled test items without labels | 0 (not labelled yet: left out" in text
    assert "Excluded: " not in text


# --- the datasheet -----------------------------------------------------------------------------


def test_datasheet_attrition_time_and_ties_equal_a_recomputation_from_the_labels(
    cli, workspace, tmp_path
):
    engine = workspace.engine
    # 2-way task with 4 annotators per item: 2-2 ties happen; the threshold gate refuses some
    rte_study(engine, tmp_path, train=6, test=16, annotators_per_item=4, gate_threshold=0.6)
    quitter = AnnotatorSession.open(engine, "pilot", "quitter", create_annotator=True)
    item = quitter.next_item()
    quitter.submit(item, "entailment")  # one training answer, then gone
    simulate(engine, "pilot", 7, 0.7, seed=5)
    report = report_json(cli, "pilot", "--bootstrap", "0", "--set", "hourly_rate=20")
    sheet = report["datasheet"]
    assert (
        cli(
            "export", "pilot", "--to", tmp_path / "out", "--format", "labels", "--phase", "all"
        ).code
        == 0
    )
    rows = list(csv.DictReader((tmp_path / "out" / "pilot-labels.csv").open()))

    training = [r for r in rows if r["phase"] == "training"]
    test = [r for r in rows if r["phase"] == "test"]
    latest = {d["annotator"]: d["admitted"] for d in report["gate"]["decisions"]}
    started = {r["annotator"] for r in training}
    per_training = {a: sum(r["annotator"] == a for r in training) for a in started}
    finished = {r["annotator"] for r in test}
    left = {a for a in started if per_training[a] < 6 and a not in latest}
    left |= {a for a, ok in latest.items() if ok and a not in finished}
    a = sheet["attrition"]
    assert a["started_training"] == len(started) == 8
    assert a["labelled_test"] == len(finished)
    assert a["admitted"] == sum(latest.values()) and a["rejected"] == sum(
        not v for v in latest.values()
    )
    assert a["abandoned"] == len(left) and "quitter" in a["abandoned_names"]
    assert a["training_pass_rate"]["value"] == pytest.approx(a["admitted"] / len(latest))
    low, high = proportion_confint(a["admitted"], len(latest), method="wilson")
    assert a["training_pass_rate"]["wilson_low"] == pytest.approx(low)
    assert a["training_pass_rate"]["wilson_high"] == pytest.approx(high)

    times = {t["name"]: t for t in sheet["time_on_task"]["annotators"]}
    for name in started:
        secs = [float(r["seconds"]) for r in rows if r["annotator"] == name]
        assert times[name]["n_labels"] == len(secs)
        # The median is over test answers (protocol/timing.py), answers and minutes over both
        # phases. Seconds are computed in the store, to SQLite's millisecond (julianday)
        # resolution.
        tested = [float(r["seconds"]) for r in test if r["annotator"] == name]
        if tested:
            assert times[name]["median_seconds"] == pytest.approx(median(tested), abs=2.5e-3)
        else:
            assert times[name]["median_seconds"] is None
        assert times[name]["total_minutes"] == pytest.approx(sum(secs) / 60, abs=1e-3)
    total = sum(float(r["seconds"]) for r in rows) / 60
    assert sheet["time_on_task"]["total_minutes"] == pytest.approx(total, abs=1e-2)
    assert sheet["cost"]["estimated_cost"] == pytest.approx(total / 60 * 20, abs=1e-2)

    votes: dict[str, dict[str, int]] = {}
    for r in test:
        votes.setdefault(r["item_id"], {}).setdefault(r["value"], 0)
        votes[r["item_id"]][r["value"]] += 1
    tied = sum(1 for v in votes.values() if sorted(v.values())[-2:] == [2, 2])
    assert tied > 0
    assert sheet["ties"]["n_tied"] == report["ties"]["n_tied"] == tied
    assert sum(sheet["ties"]["settled"].values()) == tied
    assert sheet["software_version"] and sheet["store_schema_version"] == sheet["schema_head"]
    assert sheet["first_label_at"] <= sheet["last_label_at"]
    # every format carries it
    for fmt in ("table", "markdown"):
        out = cli("report", "pilot", "--bootstrap", "0", "--format", fmt).stdout
        assert "Datasheet of the run" in out and "Abandoned" in out


# --- the benchmark's human row -----------------------------------------------------------------


def _glue_studies(workspace) -> None:
    """MNLI-m, MNLI-mm, RTE and an AX study: four annotators, original items."""

    def study(name: str, task: str, golds: list[str], right: float, seed: int) -> None:
        rng = np.random.default_rng(seed)
        labels = {}
        classes = sorted(set(golds))
        for i, g in enumerate(golds):
            labels[str(i)] = [
                g if rng.random() < right else rng.choice([c for c in classes if c != g])
                for _ in range(5)
            ]
        add_study(
            workspace.engine,
            name,
            task,
            [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)],
            labels,
        )

    study("mm", "glue/mnli-mm", [E, N, C] * 10, 0.7, 1)
    study("m", "glue/mnli-m", [E, N, C] * 10, 0.8, 2)
    study("rte", "glue/rte", ["entailment", "not_entailment"] * 12, 0.75, 3)


def test_benchmark_row_averages_by_the_leaderboard_rule(cli, workspace, tmp_path):
    _glue_studies(workspace)
    models = tmp_path / "bert"
    models.mkdir()
    (models / "RTE.tsv").write_text(
        "index\tprediction\n"
        + "".join(f"{i}\t{'entailment' if i % 3 else 'not_entailment'}\n" for i in range(24))
    )
    report = report_json(cli, "--benchmark", "glue", "--bootstrap", "200", "--model", models)
    score = {t["task"]: t["task_score"]["value"] for t in report["tasks"]}
    assert set(score) == {"glue/mnli-m", "glue/mnli-mm", "glue/rte"}
    expected = ((score["glue/mnli-m"] + score["glue/mnli-mm"]) / 2 + score["glue/rte"]) / 2
    assert report["average"]["value"] == pytest.approx(expected, abs=1e-12)
    assert report["average"]["ci_low"] < expected < report["average"]["ci_high"]
    assert report["n_groups_covered"] == 2 and report["partial"] is True
    assert "glue/cola" in report["missing"] and "glue/ax" in report["excluded_tasks"]
    assert report["published"]["average"] == pytest.approx(0.871)
    bert = report["models"][0]
    assert bert["name"] == "bert" and bert["tasks_covered"] == ["glue/rte"]
    assert bert["average"]["value"] == pytest.approx(
        next(t for t in report["tasks"] if t["task"] == "glue/rte")["models"]["bert"]["value"]
    )
    table = cli("report", "--benchmark", "glue", "--bootstrap", "0").stdout
    assert "published" in table.lower() and "not measured" in table
    for fmt in ("markdown", "latex", "html"):
        out = cli("report", "--benchmark", "glue", "--bootstrap", "50", "--format", fmt)
        assert out.code == 0, out.stderr
        assert "not measured" in out.stdout
    _check_booktabs(
        cli("report", "--benchmark", "glue", "--bootstrap", "50", "--format", "latex").stdout
    )


def test_two_model_folders_of_one_name_are_two_models(cli, workspace, tmp_path):
    """`runs/a/bert` answering RTE and `runs/b/bert` answering MNLI-m were one row "bert"
    twice, each with both folders' scores merged: a task neither folder alone answered."""
    _glue_studies(workspace)
    rte, mnli = tmp_path / "a" / "bert", tmp_path / "b" / "bert"
    rte.mkdir(parents=True)
    mnli.mkdir(parents=True)
    (rte / "RTE.tsv").write_text(
        "index\tprediction\n" + "".join(f"{i}\tentailment\n" for i in range(24))
    )
    (mnli / "MNLI-m.tsv").write_text(
        "index\tprediction\n" + "".join(f"{i}\tneutral\n" for i in range(30))
    )
    report = report_json(
        cli, "--benchmark", "glue", "--bootstrap", "0", "--model", rte, "--model", mnli
    )
    covered = {m["name"]: m["tasks_covered"] for m in report["models"]}
    assert covered == {str(rte): ["glue/rte"], str(mnli): ["glue/mnli-m"]}
    by_task = {t["task"]: set(t["models"]) for t in report["tasks"]}
    assert by_task["glue/rte"] == {str(rte)} and by_task["glue/mnli-m"] == {str(mnli)}


def test_a_task_with_two_studies_must_be_chosen(cli, workspace):
    _glue_studies(workspace)
    add_study(
        workspace.engine,
        "rte-again",
        "glue/rte",
        [{"source_id": "0", "gold": "entailment"}],
        {"0": ["entailment"] * 5},
    )
    result = cli("report", "--benchmark", "glue", "--bootstrap", "0")
    assert result.code != 0 and "--study" in result.stderr and "rte-again" in result.stderr
    chosen = report_json(cli, "--benchmark", "glue", "--bootstrap", "0", "--study", "rte-again")
    assert {t["study"] for t in chosen["tasks"]} == {"m", "mm", "rte-again"}
    assert cli("report", "rte", "--benchmark", "glue").code != 0


def test_a_model_folder_without_the_benchmarks_files_is_refused_naming_them(
    cli, workspace, tmp_path
):
    """A harness results folder (or any folder without RTE.tsv, MNLI-m.tsv …) gave a model
    row of dashes, "Tasks covered: (partial)", and no word why."""
    _glue_studies(workspace)
    logs = tmp_path / "lm eval" / "org__model"
    logs.mkdir(parents=True)
    (logs / "samples_rte_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    result = cli("report", "--benchmark", "glue", "--bootstrap", "0", "--model", logs.parent)
    assert result.code == 1, result.stdout
    assert "no glue submission file to read in it (looked for CoLA.tsv" in result.stderr
    assert "sample logs: give them to a study's report (report STUDY --model)" in result.stderr
    (tmp_path / "empty").mkdir()
    result = cli("report", "--benchmark", "glue", "--model", tmp_path / "empty")
    assert result.code == 1 and "sample logs" not in result.stderr
    # A mistyped folder is named as missing, not as the wrong kind of thing.
    missing = cli("report", "--benchmark", "glue", "--model", tmp_path / "robreta")
    assert missing.code == 1 and missing.stderr.endswith("robreta: no such folder\n")


def test_figures_of_names_the_font_lacks_draw_without_a_warning(workspace, tmp_path):
    """29.6: a name with a glyph the font has not (an emoji) draws quietly: matplotlib's
    per-glyph warnings would land between the report's lines."""
    import warnings

    from annotate.report.build import study_report
    from annotate.report.render.figures import write_figures

    pytest.importorskip("matplotlib")
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate([E, N, C, E])]
    labels = {str(i): [g, g, N] for i, g in enumerate([E, N, C, E])}
    names = ["a\x7fdel", "b\x1b[31m", "c"]  # drawn as ␡ and ␛: glyphs DejaVu Sans lacks
    add_study(workspace.engine, "quiet", "glue/mnli-m", items, labels, annotators=names)
    report = study_report(workspace.engine, "quiet", bootstrap=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        written = write_figures(report, tmp_path / "figures")
    assert written and caught == []


def test_names_with_dollar_signs_are_drawn_as_text_not_typeset(workspace, tmp_path):
    """`A$\\alpha^{2}$` is a name, shown as written; `bad$\\frac$` stopped the report with
    matplotlib's parse error when read as mathematics."""
    from annotate.report.build import study_report
    from annotate.report.render.figures import write_figures

    pytest.importorskip("matplotlib")
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate([E, N, C, E])]
    labels = {str(i): [g, g, N] for i, g in enumerate([E, N, C, E])}
    names = ["A$\\alpha^{2}$", "bad$\\frac$", "cost$1 vs $2"]
    add_study(workspace.engine, "dollars", "glue/mnli-m", items, labels, annotators=names)
    report = study_report(workspace.engine, "dollars", bootstrap=0)
    written = write_figures(report, tmp_path / "figures")
    drawn = "".join(p.read_text() for p in written if p.suffix == ".svg")
    assert "bad$\\frac$" in drawn and "A$\\alpha^{2}$" in drawn


def test_a_trainee_turned_away_has_no_test_answers_not_an_unknown_time(cli, workspace, tmp_path):
    # sim6 failed training: their time is known (training answers), their median over test
    # answers has nothing to rest on; the datasheet said "unknown", the word for no times
    rte_study(workspace.engine, tmp_path, test=10, gate_threshold=0.5)
    simulate(workspace.engine, "pilot", 6, 0.9, seed=1, accuracies=[0.95] * 5 + [0.0])
    text = cli("report", "pilot", "--format", "markdown", "--bootstrap", "0").stdout
    row = next(line for line in text.splitlines() if line.startswith("| sim6 | 6 |"))
    assert row.split(" | ")[2] == "no test answers" and "unknown" not in row


def test_a_study_without_labels_names_its_k_not_a_majority_of_0(cli, workspace, tmp_path):
    rte_study(workspace.engine, tmp_path, test=10)
    assert report_json(cli, "pilot", "--bootstrap", "0")["summary"] == (
        "Human, majority of 5: no labels yet"
    )
    tex = cli("report", "pilot", "--format", "latex", "--bootstrap", "0").stdout
    assert any(line.startswith("Human, majority of 5 (n=0) & ") for line in tex.splitlines())


def test_the_latex_datasheet_has_no_empty_header_row(cli, workspace, tmp_path):
    """The datasheet's table opened with \\toprule then \\midrule, an empty header row between:
    headerless as HTML shows it, its first row comes under the top rule."""
    rte_study(workspace.engine, tmp_path, test=10)
    tex = cli("report", "pilot", "--format", "latex", "--bootstrap", "0").stdout
    datasheet = tex.split("\\label{tab:datasheet-pilot}")[1].split("\\end{tabular}")[0]
    assert "\\toprule\nProtocol & " in datasheet
    assert "\\midrule" not in datasheet and datasheet.count("\\bottomrule") == 1


def test_a_comment_in_the_markdown_report_renders_as_typed(cli, workspace, tmp_path):
    # A flag's comment `**x**`, `[y](http://z)` or `&amp;` rendered as bold, a link and `&`
    # (only `<` and `|` were escaped).
    from markdown_it import MarkdownIt

    rte_study(workspace.engine, tmp_path, test=4)
    simulate(workspace.engine, "pilot", 3, 0.8, seed=1)
    comment = r"**x** _y_ `c` [y](http://z) ~~s~~ &amp; <b>b</b> a|b \* snake_case"
    with Session(workspace.engine) as s:
        label = s.exec(select(Label)).first()
        label.flag, label.comment = True, comment
        s.add(label)
        s.commit()
    text = cli("report", "pilot", "--format", "markdown", "--bootstrap", "0").stdout
    page = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    cells = [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", page)]
    assert comment in cells


def test_the_benchmark_latex_caption_says_which_interval_each_cell_has(cli, workspace, tmp_path):
    """MRPC (accuracy and F1) with a model: the human's two metric cells carry each metric's
    bootstrap interval and the model's task score stands under F1 marked *; the caption says
    both, rather than calling every share's interval Wilson's."""
    golds = ["1", "0"] * 10
    labels = {str(i): [g, g, g, g, "0" if i % 4 else g] for i, g in enumerate(golds)}
    add_study(
        workspace.engine,
        "mrpc",
        "glue/mrpc",
        [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)],
        labels,
    )
    bert = tmp_path / "bert"
    bert.mkdir()
    (bert / "MRPC.tsv").write_text(
        "index\tprediction\n" + "".join(f"{i}\t{i % 3 % 2}\n" for i in range(20))
    )
    args = ("report", "--benchmark", "glue", "--bootstrap", "200", "--model", bert)
    latex = cli(*args, "--format", "latex").stdout
    report = cli("report", "mrpc", "--bootstrap", "200", "--format", "json").json()
    accuracy = report["scores"]["accuracy"]
    human = next(x for x in latex.splitlines() if x.startswith("Human (this study)"))
    bounds = f"[{accuracy['ci_low'] * 100:.1f}, {accuracy['ci_high'] * 100:.1f}]"
    assert f"{accuracy['value'] * 100:.1f} {bounds}" in human
    model = next(x for x in latex.splitlines() if x.startswith("bert"))
    assert "]*" in model
    caption = latex[latex.index("\\caption{") : latex.index("\\label{")]
    assert (
        "marked *" in caption and "each metric of a task with several: the bootstrap's" in caption
    )


def test_a_model_of_the_diagnostic_alone_says_which_tasks_it_covers(cli, workspace, tmp_path):
    """A model folder holding AX.tsv alone gave "Tasks covered: (partial)", a blank before the
    word: it says it covers none of the averaged tasks, and AX apart."""
    golds = [E, N, C, E, N, C]
    items = [
        {"source_id": str(i), "gold": g, "tags": {"Logic": ["Negation"]}}
        for i, g in enumerate(golds)
    ]
    add_study(
        workspace.engine, "ax", "glue/ax", items, {str(i): [g] * 5 for i, g in enumerate(golds)}
    )
    model = tmp_path / "mybert"
    model.mkdir()
    rows = "".join(f"{i}\t{g}\n" for i, g in enumerate(golds))
    (model / "AX.tsv").write_text("index\tprediction\n" + rows)
    for fmt in ("table", "markdown"):
        out = cli(
            "report", "--benchmark", "glue", "--bootstrap", "0", "--model", model, "--format", fmt
        )
        assert out.code == 0, out.stderr
        text = " ".join(out.stdout.split())
        assert "none of the averaged tasks (partial); apart: glue/ax" in text
