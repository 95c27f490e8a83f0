"""`annotate report STUDY` as a researcher uses it: a study's labels go in (inserted straight into
the store), and the JSON, table and Markdown views must show the right aggregate, scores,
ties, agreement, individual annotators, diagnostics and gold suspects."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score, matthews_corrcoef
from sqlmodel import Session, select

from annotate import specs
from annotate.scoring.intervals import SCORE_METHOD, effective_units, wilson_interval
from annotate.store.models import Annotator, Dataset, GateDecision, Item, Label, Study, StudyItem

E, N, C = "entailment", "neutral", "contradiction"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


def add_study(
    engine: Any,
    name: str,
    task: str,
    items: list[dict[str, Any]],
    labels: dict[str, list[Any]],
    *,
    annotators: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    dev_golds: list[Any] | None = None,
    gate: list[tuple[str, bool]] = (),
) -> None:
    """Insert a study in its test phase. `items`: dicts with source_id, gold and optional
    fields / tags; `labels`: source_id -> one value per annotator (None: no label), annotators
    named a1, a2, … unless given."""
    spec = specs.load_task(task)
    protocol = specs.load_protocol("superglue-2019").effective(spec.name, overrides or {})
    with Session(engine) as s:
        test = Dataset(
            task=spec.name,
            split="test",
            path=f"{name}.test",
            sha256=f"{name}-t",
            n_items=len(items),
        )
        s.add(test)
        train = None
        if dev_golds is not None:
            train = Dataset(
                task=spec.name,
                split="dev",
                path=f"{name}.dev",
                sha256=f"{name}-d",
                n_items=len(dev_golds),
            )
            s.add(train)
        s.flush()
        for i, gold in enumerate(dev_golds or []):
            s.add(Item(dataset_id=train.id, position=i, source_id=f"dev{i}", fields={}, gold=gold))
        study = Study(
            name=name,
            task=spec.name,
            protocol=protocol.model_dump(),
            state="test",
            test_dataset_id=test.id,
            train_dataset_id=train.id if train else None,
        )
        s.add(study)
        s.flush()
        people: dict[str, int] = {a.name: a.id for a in s.exec(select(Annotator)).all()}

        def person(who: str) -> int:
            if who not in people:
                a = Annotator(name=who)
                s.add(a)
                s.flush()
                people[who] = a.id
            return people[who]

        for pos, spec_item in enumerate(items):
            item = Item(
                dataset_id=test.id,
                position=pos,
                source_id=spec_item["source_id"],
                fields=spec_item.get("fields", {}),
                gold=spec_item.get("gold"),
                tags=spec_item.get("tags"),
            )
            s.add(item)
            s.flush()
            values = labels.get(spec_item["source_id"], [])
            s.add(
                StudyItem(
                    study_id=study.id,
                    item_id=item.id,
                    phase="test",
                    position=pos,
                    n_labels=len(values),
                )
            )
            names = annotators or [f"a{j + 1}" for j in range(len(values))]
            for j, value in enumerate(values):
                if value is None:
                    continue
                s.add(
                    Label(
                        study_id=study.id,
                        item_id=item.id,
                        annotator_id=person(names[j]),
                        phase="test",
                        value=value,
                        shown_at=T0,
                        answered_at=T0 + timedelta(seconds=4 + j + pos),
                    )
                )
        for who, admitted in gate:
            s.add(
                GateDecision(
                    study_id=study.id,
                    annotator_id=person(who),
                    admitted=admitted,
                    rule="median",
                    threshold=0.7,
                    score=0.8 if admitted else 0.5,
                    n_items=10,
                )
            )
        s.commit()


# The 3-way study used throughout: five items, five annotators (a1..a5 in this order).
#   0: 5/5 right · 1: 4/5 right · 2: 3/5 wrong (suspect) · 3: 2-2-1 tie E/N · 4: 4/5 wrong (suspect)
THREE_WAY_ITEMS = [
    {"source_id": "0", "gold": E},
    {"source_id": "1", "gold": N},
    {"source_id": "2", "gold": C},
    {"source_id": "3", "gold": E},
    {"source_id": "4", "gold": N},
]
THREE_WAY_LABELS = {
    "0": [E, E, E, E, E],
    "1": [N, N, N, N, C],
    "2": [E, E, E, C, C],
    "3": [E, E, N, N, C],
    "4": [E, E, E, E, N],
}


def three_way(workspace, name: str = "mnli", **kw: Any) -> None:
    add_study(workspace.engine, name, "glue/mnli-m", THREE_WAY_ITEMS, THREE_WAY_LABELS, **kw)


def report_json(cli, *args: str) -> dict[str, Any]:
    result = cli("report", *args, "--format", "json")
    assert result.code == 0, result.stderr
    return result.json()


# --- the 3-way study ------------------------------------------------------------------------


def test_json_report_of_a_three_way_study(cli, workspace):
    three_way(workspace, overrides={"tie_rule": "abstain"}, gate=[("a1", True), ("z9", False)])
    r = report_json(cli, "mnli", "--bootstrap", "200", "--seed", "3")
    for key in (
        "study",
        "task",
        "protocol",
        "n_items",
        "n_annotators",
        "scores",
        "task_score",
        "annotators",
        "agreement",
        "ties",
        "diagnostics",
        "gold_suspects",
        "summary",
    ):
        assert key in r
    assert (r["study"], r["task"], r["n_items"], r["n_annotators"]) == ("mnli", "glue/mnli-m", 5, 5)
    assert r["protocol"]["tie_rule"] == "abstain" and r["protocol"]["annotators_per_item"] == 5
    # items 0 and 1 right; 2 and 4 wrong; the tie (3) abstains and counts as wrong
    acc = r["scores"]["accuracy"]
    assert acc["value"] == pytest.approx(0.4)
    assert acc["ci_low"] <= 0.4 <= acc["ci_high"]
    assert acc["wilson_low"] < 0.4 < acc["wilson_high"]
    assert r["task_score"]["value"] == pytest.approx(0.4)
    assert r["ties"]["n_tied"] == 1 and r["ties"]["abstained_counted_wrong"] == 1
    assert r["ties"]["items"] == [
        {"item": "3", "votes": {E: 2, N: 2, C: 1}, "resolution": "abstain", "result": None}
    ]
    # strongest disagreement with gold first: item 4 (4 of 5 against gold), then item 2 (3 of 5)
    assert [s["item"] for s in r["gold_suspects"]] == ["4", "2"]
    first = r["gold_suspects"][0]
    assert (first["gold"], first["majority"], first["votes"]) == (N, E, {E: 4, N: 1})
    assert first["against_gold"] == pytest.approx(0.8)
    assert r["agreement"]["item_agreement_histogram"] == {"5/5": 1, "4/5": 2, "3/5": 1, "2/5": 1}
    # Fleiss' κ by hand: P̄ = 0.56, P̄e = 0.56² + 0.28² + 0.16² = 0.4176
    assert r["agreement"]["fleiss_kappa"]["value"] == pytest.approx((0.56 - 0.4176) / (1 - 0.4176))
    assert r["agreement"]["fleiss_kappa"]["n_items"] == 5
    pair = {(p["a"], p["b"]): p for p in r["agreement"]["pairwise_cohen_kappa"]}
    assert pair[("a1", "a2")] == {"a": "a1", "b": "a2", "n": 5, "kappa": 1.0}
    assert len(pair) == 10
    # each annotator's own accuracy; their mean is the "mean single annotator"
    own = {a["name"]: a["scores"]["accuracy"] for a in r["annotators"]}
    assert own == pytest.approx({"a1": 0.6, "a2": 0.6, "a3": 0.4, "a4": 0.6, "a5": 0.6})
    assert all(a["n"] == 5 for a in r["annotators"])
    assert r["individual"]["task_score"]["mean"] == pytest.approx(0.56)
    assert [c["k"] for c in r["majority_of_k"]] == [1, 3, 5]
    assert r["majority_of_k"][0]["task_score"] == pytest.approx(0.56, abs=0.15)
    assert r["confusion_matrix"]["matrix"] == [[1, 0, 0, 1], [1, 1, 0, 0], [1, 0, 0, 0]]
    assert r["confusion_matrix"]["predicted"][-1] == "(no answer)"
    assert r["gate"]["admitted"] == ["a1"] and r["gate"]["refused"] == ["z9"]
    assert r["diagnostics"] is None
    assert re.fullmatch(
        r"Human, majority of 5 \(n=5\): 40\.0 \[\d+\.\d, \d+\.\d\]; mean single annotator 56\.0; "
        r"Krippendorff's α -?\d\.\d\d",
        r["summary"],
    )


def test_unanimous_items_score_separately_from_split_ones(cli, workspace):
    three_way(workspace, overrides={"tie_rule": "abstain"})
    uvs = report_json(cli, "mnli", "--bootstrap", "0")["agreement"]["unanimous_vs_split"]
    assert uvs["unanimous"] == {"n": 1, "scores": {"accuracy": 1.0}, "task_score": 1.0}
    assert uvs["split"]["n"] == 4 and uvs["split"]["scores"]["accuracy"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("rule", "dev", "extra", "expected_acc", "tie_key"),
    [
        ("dev-majority-class", [N, N, N, E], None, 0.4, "resolved_by_dev_majority_class"),
        ("dev-majority-class", [E, E, N], None, 0.6, "resolved_by_dev_majority_class"),
        ("extra-annotator", None, None, 0.4, "open_counted_wrong"),
        ("extra-annotator", None, E, 0.6, None),
    ],
)
def test_each_tie_rule_settles_the_2_2_1_split(
    cli, workspace, rule, dev, extra, expected_acc, tie_key
):
    labels = {k: list(v) for k, v in THREE_WAY_LABELS.items()}
    if extra:
        labels["3"].append(extra)  # the extra annotator breaks the tie
    add_study(
        workspace.engine,
        "s",
        "glue/mnli-m",
        THREE_WAY_ITEMS,
        labels,
        overrides={"tie_rule": rule},
        dev_golds=dev,
    )
    r = report_json(cli, "s", "--bootstrap", "0")
    assert r["scores"]["accuracy"]["value"] == pytest.approx(expected_acc)
    assert r["ties"]["rule"] == rule
    if tie_key:
        assert r["ties"]["n_tied"] == 1 and r["ties"][tie_key] == 1
    else:
        assert r["ties"]["n_tied"] == 0 and r["ties"]["units_with_more_than_k_labels"] == 1


def test_random_ties_follow_the_study_seed(cli, workspace):
    three_way(workspace, overrides={"tie_rule": "random", "seed": 11})
    first = report_json(cli, "mnli", "--bootstrap", "0")
    again = report_json(cli, "mnli", "--bootstrap", "0")
    tie = first["ties"]["items"][0]
    assert tie["resolution"] == "random" and tie["result"] in {E, N}
    assert again["ties"] == first["ties"]
    assert first["scores"]["accuracy"]["value"] == pytest.approx(0.6 if tie["result"] == E else 0.4)


@pytest.mark.parametrize("seed", range(6))
def test_the_curve_at_the_studys_k_is_the_headline_with_its_recorded_ties(cli, workspace, seed):
    """At k = the study's k the committee is the study itself: the random tie is settled once,
    as the headline settled it, whatever draws the curve makes at smaller k."""
    three_way(workspace, overrides={"tie_rule": "random", "seed": seed})
    r = report_json(cli, "mnli", "--bootstrap", "0", "--seed", str(100 + seed))
    [at_k] = [row for row in r["majority_of_k"] if row["k"] == 5]
    assert at_k["scores"]["accuracy"] == pytest.approx(r["scores"]["accuracy"]["value"])
    assert at_k["task_score"] == pytest.approx(r["task_score"]["value"])
    assert at_k["draws"] == 1


def test_bootstrap_is_reproducible_with_a_seed(cli, workspace):
    three_way(workspace)
    a = report_json(cli, "mnli", "--bootstrap", "300", "--seed", "5")
    b = report_json(cli, "mnli", "--bootstrap", "300", "--seed", "5")
    c = report_json(cli, "mnli", "--bootstrap", "300", "--seed", "6")
    keys = ("scores", "task_score", "agreement")
    assert all(a[k] == b[k] for k in keys)
    assert a["bootstrap"] == {**b["bootstrap"]} and a["bootstrap"]["seed"] == 5
    assert any(a[k] != c[k] for k in keys)
    alpha = a["agreement"]["krippendorff_alpha"]
    assert alpha["ci_low"] <= alpha["value"] <= alpha["ci_high"]


def test_draws_shared_within_a_report_change_no_number(cli, workspace, monkeypatch):
    """The report draws each bootstrap's weights once for the statistics and estimators that
    resample with the same generator (scoring/intervals.py: `shared_draws`): its JSON is the
    one drawn afresh for each."""
    import contextlib

    from annotate.report import build

    three_way(workspace)
    shared = report_json(cli, "mnli", "--bootstrap", "300")
    monkeypatch.setattr(build, "shared_draws", contextlib.nullcontext)
    assert report_json(cli, "mnli", "--bootstrap", "300") == shared


def test_without_bootstrap_there_are_no_bootstrap_intervals_but_wilsons(cli, workspace):
    three_way(workspace)
    r = report_json(cli, "mnli", "--bootstrap", "0")
    assert r["scores"]["accuracy"]["ci_low"] is None and r["task_score"]["ci_high"] is None
    acc = r["scores"]["accuracy"]
    # Accuracy alone: the quotable line gives Wilson's interval, which needs no resampling.
    assert r["headline_interval"]["method"].startswith("Wilson score interval")
    assert "these annotators held fixed" in r["headline_interval"]["method"]
    low, high = acc["wilson_low"] * 100, acc["wilson_high"] * 100
    value = acc["value"] * 100
    assert f"{value:.1f} [{low:.1f}, {high:.1f}]" in r["summary"].split(";")[0]


def test_a_study_with_every_item_right_has_an_interval_below_100(cli, workspace):
    items = [{"source_id": str(i), "gold": E} for i in range(20)]
    add_study(workspace.engine, "easy", "glue/mnli-m", items, {str(i): [E] * 5 for i in range(20)})
    r = report_json(cli, "easy", "--bootstrap", "500")
    assert r["scores"]["accuracy"]["value"] == 1.0
    low, high = wilson_interval(20, 20)
    assert (r["headline_interval"]["low"], r["headline_interval"]["high"]) == (low, high)
    assert f"100.0 [{low * 100:.1f}, {high * 100:.1f}]" in r["summary"]
    # The bootstrap collapses (every resample is 100%): the row gives the score-type interval
    # over the 20 items instead, never a zero width.
    assert (r["scores"]["accuracy"]["ci_low"], r["scores"]["accuracy"]["ci_high"]) == (low, high)
    # The broader claim (other annotators like these) is never narrower than the fixed one.
    humans = r["humans_interval"]
    assert humans["low"] <= low and humans["high"] == 1.0


def test_a_multi_metric_task_quotes_the_score_interval_at_its_units(cli, workspace):
    add_study(
        workspace.engine,
        "cb",
        "superglue/cb",
        [
            {"source_id": str(i), "gold": g}
            for i, g in enumerate([E, "contradiction", "neutral", E])
        ],
        {"0": [E] * 5, "1": ["contradiction"] * 5, "2": [E] * 5, "3": [E] * 5},
    )
    r = report_json(cli, "cb", "--bootstrap", "200")
    total = r["task_score"]
    assert r["headline_interval"]["method"].startswith(SCORE_METHOD)
    n_eff = effective_units(total["value"], 4, 4, total["ci_low"], total["ci_high"])
    low, high = wilson_interval(total["value"] * n_eff, n_eff)
    assert (r["headline_interval"]["low"], r["headline_interval"]["high"]) == (low, high)
    assert high > low


def test_table_view_shows_markup_like_text_verbatim(cli, workspace, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # wide enough that no cell is folded
    items = [{"source_id": "[bold]x[/bold]", "gold": E}, {"source_id": "[/foo]", "gold": N}]
    labels = {"[bold]x[/bold]": [E, N, N], "[/foo]": [N, N, E]}
    add_study(
        workspace.engine,
        "[CLS] study",
        "glue/mnli-m",
        items,
        labels,
        annotators=["[red]ann[/red]", "[SEP]", "[@click=app.quit]x[/]"],
    )
    result = cli("report", "[CLS] study", "--bootstrap", "50")
    assert result.code == 0, result.stderr
    out = result.stdout
    for text in (
        "[CLS] study",
        "[red]ann[/red]",
        "[SEP]",
        "[@click=app.quit]x[/]",
        "[bold]x[/bold]",
    ):
        assert text in out
    # the quotable line opens the report: 3 of 5 labels, so it says unfinished (issue 11)
    assert "UNFINISHED: 3 of 5 labels on 2 of 2 items; Human, majority of 3" in out
    assert "Tie rule" in out and "Effective protocol" in out and "Gate decisions" in out
    assert "█" in out  # the agreement histogram as bars


def test_markdown_for_papers(cli, workspace):
    three_way(workspace, overrides={"tie_rule": "abstain"})
    result = cli("report", "mnli", "--format", "markdown", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    md = result.stdout
    assert md.startswith("# Human performance: mnli (glue/mnli-m)")
    assert "> Human, majority of 5 (n=5): 40.0 [" in md and "]; mean single annotator 56.0" in md
    assert "| Accuracy | 40.0 |" in md
    assert "## Effective protocol" in md and "| tie_rule | abstain |" in md
    assert "| 2/5 | 1 |" in md


def test_the_gate_section_says_rejected_as_gate_and_status_do(cli, workspace, monkeypatch):
    """`gate`, `status` and the datasheet say "rejected"; the report's gate section said
    "refused" for the same annotators. The JSON keeps its key `refused`."""
    monkeypatch.setenv("COLUMNS", "250")  # the table's cells unwrapped
    three_way(workspace, gate=[("a1", True), ("z9", False)])
    for fmt in ("table", "markdown", "html"):
        out = " ".join(cli("report", "mnli", "--format", fmt, "--bootstrap", "0").stdout.split())
        assert "Gate decisions: 1 admitted, 1 rejected" in out, fmt
        assert "refused" not in out, fmt
    assert report_json(cli, "mnli", "--bootstrap", "0")["gate"]["refused"] == ["z9"]


def test_the_per_item_agreement_table_has_one_heading_in_every_format(cli, workspace):
    """Its count column was headed "Items" in Markdown and "Count" in HTML: one heading, from
    the agreement section, and the same title (Markdown said "Per-item" of any unit)."""
    three_way(workspace)
    md = cli("report", "mnli", "--format", "markdown", "--bootstrap", "0").stdout
    page = cli("report", "mnli", "--format", "html", "--bootstrap", "0").stdout
    title = "Per-item agreement (votes for the most chosen answer)"
    assert f"{title}:\n\n| Agreement | Items |" in md
    assert f"<h3>{title}</h3>\n<table>\n<thead><tr><th>Agreement</th><th>Items</th>" in page
    assert "<th>Count</th>" not in page


def test_unknown_study_is_a_clear_error(cli, workspace):
    three_way(workspace)
    result = cli("report", "nope")
    assert result.code == 1
    assert "no study named 'nope' (studies: mnli)" in result.stderr


# --- models and diagnostics -----------------------------------------------------------------


def test_model_predictions_are_scored_on_the_same_items(cli, workspace, tmp_path: Path):
    three_way(workspace, overrides={"tie_rule": "abstain"})
    (tmp_path / "bert").mkdir()
    model = tmp_path / "bert" / "MNLI-m.tsv"
    model.write_text(
        "index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in enumerate([E, N, C, E, N, E]))
    )
    r = report_json(cli, "mnli", "--bootstrap", "100", "--model", str(model))
    (row,) = r["models"]
    assert row["name"] == "bert" and row["n"] == 5  # the model's folder: MNLI-m is the task
    assert row["scores"]["accuracy"]["value"] == 1.0
    assert row["paired"] == {
        "n": 5,
        "human_only_right": 0,
        "model_only_right": 3,
        "mcnemar_p": 0.25,
    }


def test_superglue_predictions_map_back_through_the_submission_encoding(cli, workspace, tmp_path):
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(["true", "false", "true"])]
    add_study(
        workspace.engine,
        "wsc",
        "superglue/wsc",
        items,
        {"0": ["true"] * 3, "1": ["false"] * 3, "2": ["false"] * 3},
    )
    model = tmp_path / "WSC.jsonl"  # WSC submissions spell the labels "True" / "False"
    model.write_text(
        '{"idx": 0, "label": "True"}\n{"idx": 1, "label": "True"}\n{"idx": 2, "label": "True"}\n'
    )
    r = report_json(cli, "wsc", "--bootstrap", "0", "--model", str(model))
    assert r["scores"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert r["models"][0]["scores"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert r["models"][0]["paired"]["human_only_right"] == 1


def test_multirc_predictions_are_read_from_the_nested_submission(cli, workspace, tmp_path):
    items = [
        {"source_id": "10", "gold": {"0": "1", "1": "0"}},
        {"source_id": "11", "gold": {"2": "1"}},
    ]
    labels = {"10": [{"0": "1", "1": "0"}] * 3, "11": [{"2": "0"}] * 3}
    add_study(workspace.engine, "mrc", "superglue/multirc", items, labels)
    answers = [{"idx": 0, "label": 1}, {"idx": 1, "label": 1}]
    line = {
        "idx": 5,
        "passage": {
            "questions": [
                {"idx": 10, "answers": answers},
                {"idx": 11, "answers": [{"idx": 2, "label": 1}]},
            ]
        },
    }
    model = tmp_path / "MultiRC.jsonl"
    model.write_text(json.dumps(line) + "\n")
    r = report_json(cli, "mrc", "--bootstrap", "0", "--model", str(model))
    scores = r["models"][0]["scores"]
    assert scores["f1a"]["value"] == pytest.approx(0.8)  # tp 2, fp 1
    assert scores["em"]["value"] == pytest.approx(0.5)
    assert r["scores"]["f1a"]["value"] == pytest.approx(2 / 3)  # humans: tp 1, fn 1


def test_a_bad_model_file_names_the_line(cli, workspace, tmp_path: Path):
    three_way(workspace)
    model = tmp_path / "bad.tsv"
    model.write_text("index\tprediction\n0\tentailment\n1\tmaybe\n")
    result = cli("report", "mnli", "--model", str(model))
    assert result.code == 1
    assert f"{model}:3: unknown prediction 'maybe'" in result.stderr


def test_diagnostics_per_category_and_tag_for_humans_and_models(cli, workspace, tmp_path: Path):
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
    add_study(workspace.engine, "ax", "glue/ax", items, labels, overrides={"tie_rule": "abstain"})
    model_pred = [g if i % 5 else N for i, g in enumerate(golds)]
    (tmp_path / "bert").mkdir()
    model = tmp_path / "bert" / "AX.tsv"
    model.write_text(
        "index\tprediction\n" + "".join(f"{i}\t{p}\n" for i, p in enumerate(model_pred))
    )
    r = report_json(cli, "ax", "--bootstrap", "50", "--model", str(model))
    d = r["diagnostics"]
    assert d["metric"] == "r3" and "not across categories" in d["note"]
    assert d["coarse"]["Logic"]["n"] == 24 and d["coarse"]["Knowledge"]["n"] == 6
    assert (
        d["fine"]["Logic"]["Conditionals"]["n"] == 12 and d["fine"]["Logic"]["Negation"]["n"] == 24
    )
    know = [i for i in range(24) if i % 4 == 0]
    expected = matthews_corrcoef([golds[i] for i in know], [model_pred[i] for i in know])
    assert 0 < expected < 1
    assert d["coarse"]["Knowledge"]["models"]["bert"]["value"] == pytest.approx(expected)
    cond = [i for i in range(24) if i % 2 == 0]
    expected = matthews_corrcoef([golds[i] for i in cond], [model_pred[i] for i in cond])
    assert d["fine"]["Logic"]["Conditionals"]["models"]["bert"]["value"] == pytest.approx(expected)
    assert set(d["coarse"]["Logic"]) >= {"value", "n", "ci_low", "ci_high", "models"}
    result = cli("report", "ax", "--bootstrap", "0", "--model", str(model))
    assert "World knowledge" in result.stdout and "not across categories" in " ".join(
        result.stdout.split()
    )


# --- other task kinds -----------------------------------------------------------------------


def test_cb_collapses_the_seven_point_scale_and_uses_ordinal_alpha(cli, workspace):
    golds = [E, N, C, E, C, N]
    answers = [
        ["1", "2", "1", "3", "2"],  # E E E N E -> E
        ["4", "3", "5", "6", "4"],  # N N N C N -> N
        ["7", "6", "6", "5", "1"],  # C C C N E -> C
        ["1", "2", "3", "4", "6"],  # E E N N C -> tie, abstain
        ["2", "3", "4", "6", "7"],  # E N N C C -> tie, abstain
        ["5", "5", "6", "7", "4"],  # N N C C N -> N
    ]
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)]
    add_study(
        workspace.engine,
        "cb",
        "superglue/cb",
        items,
        {str(i): a for i, a in enumerate(answers)},
        overrides={"tie_rule": "abstain"},
    )
    r = report_json(cli, "cb", "--bootstrap", "0")
    pred = [E, N, C, "none", "none", N]
    assert r["scores"]["accuracy"]["value"] == pytest.approx(4 / 6)
    expected_f1 = f1_score(golds, pred, labels=[E, N, C], average="macro")
    assert r["scores"]["macro_f1"]["value"] == pytest.approx(expected_f1)
    alpha = r["agreement"]["krippendorff_alpha"]
    assert alpha["level"] == "ordinal"
    raw = np.array([[float(x) for x in row] for row in answers]).T
    assert alpha["value"] == pytest.approx(krippendorff.alpha(raw, level_of_measurement="ordinal"))
    assert r["agreement"]["krippendorff_alpha_collapsed"]["level"] == "nominal"
    assert r["ties"]["n_tied"] == 2
    assert "macro-F1" in r["summary"] and "(ordinal)" in r["summary"]


@pytest.mark.parametrize("how", ["mean", "median"])
def test_stsb_averages_ratings_and_correlates_with_gold(cli, workspace, how):
    golds = [0.4, 1.5, 2.25, 3.0, 4.8, 2.0]
    ratings = [
        [0, 1, 0, 0, 1],
        [1, 2, 2, 1, 5],
        [2, 3, 2, 2, 3],
        [3, 3, 4, 2, 3],
        [5, 5, 4, 5, 5],
        [4, 4, 4, 3, 5],
    ]
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)]
    add_study(
        workspace.engine,
        "sts",
        "glue/stsb",
        items,
        {str(i): [float(x) for x in r] for i, r in enumerate(ratings)},
        overrides={"regression_aggregation": how},
    )
    r = report_json(cli, "sts", "--bootstrap", "200")
    human = [getattr(np, how)(x) for x in ratings]
    assert r["scores"]["pearson"]["value"] == pytest.approx(stats.pearsonr(golds, human)[0])
    assert r["scores"]["spearman"]["value"] == pytest.approx(stats.spearmanr(golds, human)[0])
    alpha = r["agreement"]["krippendorff_alpha"]
    assert alpha["level"] == "interval"
    assert alpha["value"] == pytest.approx(
        krippendorff.alpha(np.array(ratings, dtype=float).T, level_of_measurement="interval")
    )
    assert (
        r["agreement"]["fleiss_kappa"]["value"] is None
        and "ratings" in r["agreement"]["fleiss_kappa"]["note"]
    )
    assert r["agreement"]["pairwise_weights"] == "quadratic"
    assert r["ties"]["applies"] is False
    assert [s["item"] for s in r["gold_suspects"]] == ["5"]  # 4.0 (or 4.0) against gold 2.0
    assert r["summary"].startswith(f"Human, {how} of 5 (n=6): ")


def test_a_score_where_its_metric_degenerates_says_why(cli, workspace):
    """Constant ratings, one gold class, a class only the answers hold: a word, not a bare
    "–" or 0.0 (each value still as scipy/sklearn give it)."""
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate([0.5, 2.0, 4.5])]
    add_study(workspace.engine, "flat", "glue/stsb", items, {str(i): [3.0] * 3 for i in range(3)})
    r = report_json(cli, "flat", "--bootstrap", "0")
    assert r["scores"]["pearson"]["value"] is None
    assert (
        "Pearson and Spearman are undefined: the human answers are all 3 (no variance)."
        in (r["notes"])
    )
    items = [{"source_id": str(i), "gold": "not_entailment"} for i in range(3)]
    labels = {str(i): ["not_entailment"] * 3 for i in range(3)}
    add_study(workspace.engine, "one", "superglue/axb", items, labels)
    r = report_json(cli, "one", "--bootstrap", "0")
    assert r["scores"]["mcc"]["value"] == 0.0
    assert any(
        "MCC is undefined on one class (the gold labels are all not_entailment)" in n
        for n in r["notes"]
    )
    golds = [E, N, E, N]
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)]
    labels = {"0": [C] * 3, "1": [N] * 3, "2": [E] * 3, "3": [N] * 3}
    add_study(workspace.engine, "cb2", "superglue/cb", items, labels)
    r = report_json(cli, "cb2", "--bootstrap", "0")
    assert r["scores"]["macro_f1"]["value"] == pytest.approx(
        f1_score(golds, [C, N, E, N], average="macro")
    )
    assert any("contradiction (answered for 1) has no gold item" in n for n in r["notes"])


def test_a_model_correlating_perfectly_is_quoted_with_the_score_interval_by_name(
    cli, workspace, tmp_path: Path
):
    golds = [0.4, 1.5, 2.25, 3.0, 4.8, 2.1, 3.7, 0.9]
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)]
    ratings = {str(i): [round(g), round(g) + 1.0, 2.0] for i, g in enumerate(golds)}
    add_study(workspace.engine, "sts", "glue/stsb", items, ratings)
    model = tmp_path / "STS-B.tsv"
    model.write_text(
        "index\tprediction\n" + "".join(f"{i}\t{g / 2:.3f}\n" for i, g in enumerate(golds))
    )
    [row] = report_json(cli, "sts", "--bootstrap", "200", "--model", str(model))["models"]
    assert row["task_score"]["value"] == pytest.approx(1.0)
    assert row["interval"]["high"] <= 1.0 and row["interval"]["low"] < 0.99
    assert row["interval"]["method"].startswith("Wilson score interval at the effective number")
    compared = cli("compare", "sts", "--model", model, "--bootstrap", "200", "--format", "json")
    assert compared.code == 0, compared.stderr
    quoted = compared.json()["model_scores"]["task_score"]["interval"]
    assert (quoted["low"], quoted["high"]) == (row["interval"]["low"], row["interval"]["high"])
    assert quoted["method"] == row["interval"]["method"]
    table = cli("compare", "sts", "--model", model, "--bootstrap", "0").stdout
    assert "human mean" in table and "human majority" not in table


def test_multirc_votes_per_answer_and_scores_f1a_and_em(cli, workspace):
    items = [
        {"source_id": "q1", "gold": {"0": "1", "1": "0", "2": "1"}},
        {"source_id": "q2", "gold": {"3": "0", "4": "1"}},
    ]
    labels = {
        "q1": [
            {"0": "1", "1": "0", "2": "1"},
            {"0": "1", "1": "1", "2": "1"},
            {"0": "1", "1": "0", "2": "0"},
        ],
        "q2": [{"3": "1", "4": "1"}, {"3": "1", "4": "1"}, {"3": "0", "4": "0"}],
    }
    add_study(workspace.engine, "mrc", "superglue/multirc", items, labels)
    r = report_json(cli, "mrc", "--bootstrap", "0")
    # q1 all right; q2: answer 3 wrong (1 vs gold 0), answer 4 right -> tp 3, fp 1, fn 0
    assert r["scores"]["f1a"]["value"] == pytest.approx(2 * 3 / (2 * 3 + 1))
    assert r["scores"]["em"]["value"] == pytest.approx(0.5)
    assert r["sample"]["unit"] == "candidate answer"
    assert r["agreement"]["item_agreement_histogram"] == {"3/3": 1, "2/3": 4}
    assert r["gold_suspects"][0]["item"] == "q2"
    assert r["gold_suspects"][0]["answers"][0]["answer"] == "3"
    assert r["summary"].startswith(
        "UNFINISHED: 3 of 5 labels on 2 of 2 items; Human, majority of 3 per answer (n=2): "
    )


def test_record_scores_token_f1_and_em_over_gold_answers(cli, workspace):
    items = [
        {"source_id": "0", "gold": ["The Beatles"]},
        {"source_id": "1", "gold": ["McCartney", "Sir Paul"]},
    ]
    labels = {
        "0": ["Beatles", "Beatles", "Stones"],
        "1": ["Paul McCartney", "Paul McCartney", "Lennon"],
    }
    add_study(workspace.engine, "rec", "superglue/record", items, labels)
    r = report_json(cli, "rec", "--bootstrap", "0")
    # "Beatles" matches "The Beatles" once the article is dropped; "Paul McCartney" scores F1 2/3
    assert r["scores"]["record_em"]["value"] == pytest.approx(0.5)
    assert r["scores"]["record_f1"]["value"] == pytest.approx((1 + 2 / 3) / 2)
    assert [s["item"] for s in r["gold_suspects"]] == ["1"]
    assert r["agreement"]["krippendorff_alpha"]["level"] == "nominal"


def test_axg_reports_gender_parity_over_minimal_pairs(cli, workspace):
    NE = "not_entailment"
    # As in the real AX-g.jsonl: pair_id is unique per row; rows 2k and 2k+1 form a pair and
    # share their hypothesis.
    items = [
        {"source_id": str(i), "gold": g, "fields": {"pair_id": 551646 + 2 * i, "hypothesis": h}}
        for i, (g, h) in enumerate([(E, "h0"), (E, "h0"), (NE, "h1"), (NE, "h1"), (E, "h2")])
    ]  # item 4's partner (5) was not sampled
    labels = {"0": [E] * 3, "1": [E] * 3, "2": [NE] * 3, "3": [E, E, NE], "4": [E] * 3}
    add_study(workspace.engine, "axg", "superglue/axg", items, labels)
    r = report_json(cli, "axg", "--bootstrap", "100")
    assert r["scores"]["gender_parity"]["value"] == pytest.approx(0.5)  # 0/1 alike, 2/3 not
    assert r["scores"]["accuracy"]["value"] == pytest.approx(0.8)
    assert "minimal pairs resampled together" in r["bootstrap"]["method"]


# --- benchmark, missing gold, degenerate data -----------------------------------------------


def test_benchmark_score_over_several_studies_is_marked_partial(cli, workspace):
    NE = "not_entailment"
    add_study(
        workspace.engine,
        "rte",
        "glue/rte",
        [{"source_id": "0", "gold": E}, {"source_id": "1", "gold": NE}],
        {"0": [E, E, E], "1": [E, E, NE]},
    )
    add_study(
        workspace.engine,
        "mrpc",
        "glue/mrpc",
        [{"source_id": "0", "gold": "1"}, {"source_id": "1", "gold": "0"}],
        {"0": ["1", "1", "1"], "1": ["0", "0", "1"]},
    )
    r = report_json(cli, "rte", "--bootstrap", "0")
    b = r["benchmark"]
    assert b["benchmark"] == "glue" and b["partial"] is True
    # A one-study report loads one study: the other task's study is named, not scored.
    scores = {t["task"]: (t["study"], t["task_score"]) for t in b["tasks"]}
    assert scores == {"glue/rte": ("rte", 0.5), "glue/mrpc": ("mrpc", None)}
    assert b["score"] is None and "annotate report --benchmark glue" in b["note"]
    assert (
        b["n_tasks_covered"] == 2 and "glue/cola" in b["missing"] and "glue/ax" not in b["missing"]
    )
    table = cli("report", "rte", "--bootstrap", "0").stdout
    assert "glue: partial, 2 of" in table
    row = cli("report", "--benchmark", "glue", "--bootstrap", "0", "--format", "json").json()
    assert {t["task"]: t["task_score"]["value"] for t in row["tasks"]} == pytest.approx(
        {"glue/rte": 0.5, "glue/mrpc": 1.0}
    )


def test_a_benchmark_task_whose_study_has_no_gold_is_named_with_its_study(cli, workspace):
    """`report --benchmark` listed RTE, labelled on test items without gold, among the
    "Missing tasks" as if never run: it is there with its study and why it counts for nothing."""
    items = [{"source_id": str(i), "gold": None} for i in range(2)]
    add_study(workspace.engine, "rte test [b]", "glue/rte", items, {"0": [E, E, E], "1": [E, E, E]})
    table = cli("report", "--benchmark", "glue", "--bootstrap", "0").stdout
    (coverage,) = [line for line in table.splitlines() if "Missing tasks" in line]
    assert "glue/rte (study rte test [b]: no score)" in coverage
    assert "glue/cola," in coverage  # a task with no study is named alone, as before


def test_without_gold_scores_are_omitted_but_agreement_is_computed(cli, workspace):
    items = [{"source_id": str(i), "gold": None} for i in range(3)]
    add_study(
        workspace.engine,
        "blind",
        "glue/mnli-m",
        items,
        {"0": [E, E, N], "1": [N, N, N], "2": [C, E, C]},
    )
    r = report_json(cli, "blind", "--bootstrap", "50")
    assert r["has_gold"] is False
    assert r["scores"]["accuracy"]["value"] is None and r["gold_suspects"] == []
    assert any("no gold labels" in n for n in r["notes"])
    assert r["agreement"]["krippendorff_alpha"]["value"] is not None
    assert r["summary"].startswith(
        "UNFINISHED: 3 of 5 labels on 3 of 3 items; "
        "Human, majority of 3 (n=3): no gold labels, scores omitted; Krippendorff's α"
    )
    assert "no gold labels" in cli("report", "blind").stdout


def test_figures_without_gold_name_the_ones_not_drawn(cli, workspace, tmp_path):
    """`--figures` on a study without gold wrote the seconds-per-item figure alone and said
    nothing of the others: one line names the figures that need gold."""
    pytest.importorskip("matplotlib")
    items = [{"source_id": str(i), "gold": None} for i in range(3)]
    add_study(workspace.engine, "blind", "glue/mnli-m", items, {"0": [E, N], "1": [N, N]})
    result = cli("report", "blind", "--bootstrap", "0", "--figures", tmp_path / "figs")
    assert result.code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert (
        "note: the test items have no gold labels: the majority-of-k curve, each annotator's "
        "accuracy and the confusion matrix need them and were not drawn"
    ) in said


def test_one_class_only_gives_defined_values_and_a_message(cli, workspace):
    items = [{"source_id": str(i), "gold": E} for i in range(3)]
    add_study(workspace.engine, "flat", "glue/mnli-m", items, {str(i): [E, E, E] for i in range(3)})
    r = report_json(cli, "flat", "--bootstrap", "100")
    assert r["scores"]["accuracy"]["value"] == 1.0
    alpha = r["agreement"]["krippendorff_alpha"]
    assert alpha["value"] is None and "same value" in alpha["note"]
    assert r["agreement"]["fleiss_kappa"]["value"] is None
    assert all(p["kappa"] is None for p in r["agreement"]["pairwise_cohen_kappa"])
    assert cli("report", "flat").code == 0


def test_one_annotator_and_single_label_items_do_not_crash(cli, workspace):
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate([E, N, C])]
    add_study(
        workspace.engine,
        "solo",
        "glue/mnli-m",
        items,
        {"0": [E], "1": [N], "2": [E]},
        annotators=["only"],
    )
    r = report_json(cli, "solo", "--bootstrap", "100")
    assert r["n_annotators"] == 1 and r["scores"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert r["agreement"]["krippendorff_alpha"]["value"] is None
    assert "two labels" in r["agreement"]["krippendorff_alpha"]["note"]
    assert r["agreement"]["pairwise_cohen_kappa"] == []
    assert [c["k"] for c in r["majority_of_k"]] == [1]
    assert any("fewer than k = 5 labels" in n for n in r["notes"])
    md = cli("report", "solo", "--format", "markdown").stdout
    assert "UNFINISHED: 1 of 5 labels on 3 of 3 items; Human, majority of 1 (n=3): 66.7" in md


def test_a_cb_study_with_no_test_label_yet_is_reported(cli, workspace):
    # CB's answers are a scale: with no label there is none to resample (it stopped the report).
    items = [{"source_id": str(i), "gold": E} for i in range(3)]
    add_study(workspace.engine, "cb-open", "superglue/cb", items, {})
    r = report_json(cli, "cb-open", "--bootstrap", "200")
    assert r["n_items"] == 0
    assert any("3 of 3 sampled test items have no labels yet" in n for n in r["notes"])


def test_items_not_labelled_yet_are_reported(cli, workspace):
    items = [{"source_id": str(i), "gold": E} for i in range(4)]
    add_study(
        workspace.engine, "open", "glue/mnli-m", items, {"0": [E, E, N, E, E], "1": [E, N, N]}
    )
    r = report_json(cli, "open", "--bootstrap", "0")
    assert (
        r["sample"]["n_sample"] == 4 and r["n_items"] == 2 and r["sample"]["n_items_complete"] == 1
    )
    assert r["sample"]["labels_per_item"] == {"5": 1, "3": 1}
    assert any("2 of 4 sampled test items have no labels yet" in n for n in r["notes"])
    json.dumps(r)  # plain JSON


def test_the_humans_interval_draws_annotators_afresh_and_contains_its_point(cli, workspace):
    """Items resampled and annotators drawn afresh from a fitted model: wider than the
    items-only interval, around the point estimate, and wider still when the annotators
    differ more in skill (their sampling is what it adds)."""
    rng = np.random.default_rng(8)
    n_items = 40
    golds = [E if i % 2 else N for i in range(n_items)]
    other = {E: N, N: E}
    widths = {}
    for name, accuracies in (("alike", [0.8] * 5), ("varied", [0.98, 0.9, 0.75, 0.62, 0.55])):
        votes = {
            str(i): [g if rng.random() < a else other[g] for a in accuracies]
            for i, g in enumerate(golds)
        }
        add_study(
            workspace.engine,
            name,
            "glue/mnli-m",
            [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)],
            votes,
            overrides={"tie_rule": "abstain"},
        )
        r = report_json(cli, name, "--bootstrap", "1000", "--seed", "4")
        humans = r["humans_interval"]
        assert humans["method"].startswith("bootstrap with a fitted annotator model")
        assert humans["low"] <= r["task_score"]["value"] <= humans["high"]
        width = humans["high"] - humans["low"]
        assert width > r["task_score"]["ci_high"] - r["task_score"]["ci_low"]
        widths[name] = width
    assert widths["varied"] > widths["alike"]

    table_out = cli("report", "varied", "--bootstrap", "200").stdout
    assert "Annotators like these, not only these:" in " ".join(table_out.split())


def undefined_subset_study(engine: Any) -> None:
    """A diagnostic study where Logic holds three entailment items, all answered right, and
    each Knowledge tag one item: their R3 is undefined (a correlation needs two classes)."""
    golds = [E, E, E, N, C, N]
    items, labels = [], {}
    for i, gold in enumerate(golds):
        tags = {"Logic": ["Negation"]} if i < 3 else {"Knowledge": [f"Tag {i}"]}
        items.append({"source_id": str(i), "gold": gold, "tags": tags})
        labels[str(i)] = [gold] * 3
    add_study(engine, "ax-small", "glue/ax", items, labels)


def test_an_undefined_r3_says_why_in_every_format(cli, workspace, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the table's cells unwrapped
    undefined_subset_study(workspace.engine)
    d = report_json(cli, "ax-small", "--bootstrap", "50")["diagnostics"]
    logic = d["coarse"]["Logic"]
    assert logic["n"] == 3 and logic["value"] is None and logic["undefined"] == "one class"
    assert logic["ci_low"] is None and logic["ci_high"] is None
    assert d["fine"]["Knowledge"]["Tag 4"]["undefined"] == "one class"
    assert d["coarse"]["Knowledge"]["value"] == pytest.approx(1.0)  # N, C, N: defined
    assert "undefined" not in d["coarse"]["Knowledge"]
    for fmt in ("table", "markdown", "html"):
        out = " ".join(cli("report", "ax-small", "--format", fmt).stdout.split())
        assert "0.00 [0.00, 0.00]" not in out, fmt
        assert "undefined (n=3, one class)" in out, fmt
        assert "undefined (n=1, one class)" in out, fmt


def test_the_console_chart_draws_no_bar_for_an_undefined_r3(workspace):
    from annotate.report.build import study_report
    from annotate.tui.console.charts import report_charts

    undefined_subset_study(workspace.engine)
    charts = report_charts(study_report(workspace.engine, "ax-small", bootstrap=0))
    assert charts.r3_categories == ["Knowledge"]
    assert charts.r3_series["humans"] == [pytest.approx(1.0)]
    assert charts.r3_undefined == ["Logic: undefined (n=3, one class)"]


def test_the_console_annotator_chart_promises_no_interval_it_does_not_draw(workspace):
    """26.10: on an R3 task the chart draws points alone, so its title names no interval."""
    from annotate.report.build import study_report
    from annotate.tui.console.charts import annotators_title, report_charts

    undefined_subset_study(workspace.engine)
    charts = report_charts(study_report(workspace.engine, "ax-small", bootstrap=0))
    assert all(p.low is None for p in charts.annotators)
    assert annotators_title(charts) == "Each annotator's task score (no interval drawn)"


def test_the_console_annotator_chart_of_a_study_without_gold_says_why_it_is_empty(workspace):
    """Without gold the chart stayed empty under "Each annotator's accuracy (no interval
    drawn)": its title says there is no score to draw, as the majority-of-k chart's does."""
    from annotate.report.build import study_report
    from annotate.tui.console.charts import annotators_title, report_charts

    items = [{"source_id": str(i), "gold": None} for i in range(3)]
    add_study(workspace.engine, "blind", "glue/mnli-m", items, {"0": [E, N], "1": [N, N]})
    charts = report_charts(study_report(workspace.engine, "blind", bootstrap=0))
    assert charts.annotators and all(p.value is None for p in charts.annotators)
    assert annotators_title(charts) == (
        "Each annotator's accuracy: no gold labels or no scored answers yet"
    )


def test_the_benchmark_row_shows_the_diagnostic_sets_apart_from_the_average(cli, workspace):
    """SuperGLUE's published row gives AX-b and AX-g beside the average, not in it: an AX-g
    study's scores are shown, marked apart, in every rendering, and the average is the scored
    tasks' alone."""
    NE = "not_entailment"
    add_study(
        workspace.engine,
        "rte",
        "superglue/rte",
        [{"source_id": "0", "gold": E}, {"source_id": "1", "gold": NE}],
        {"0": [E, E, E], "1": [E, E, NE]},
    )
    items = [
        {"source_id": str(i), "gold": g, "fields": {"pair_id": 551646 + 2 * i, "hypothesis": h}}
        for i, (g, h) in enumerate([(E, "h0"), (E, "h0"), (NE, "h1"), (NE, "h1")])
    ]
    labels = {"0": [E] * 3, "1": [E] * 3, "2": [NE] * 3, "3": [E, E, NE]}
    add_study(workspace.engine, "axg", "superglue/axg", items, labels)
    args = ("report", "--benchmark", "superglue", "--bootstrap", "0")
    row = cli(*args, "--format", "json").json()
    assert [t["task"] for t in row["tasks"]] == ["superglue/rte"]
    (axg,) = row["diagnostics"]
    assert (axg["task"], axg["study"]) == ("superglue/axg", "axg")
    # Pair 2/3 answered apart (item 3's majority is entailment, its gold not).
    assert axg["scores"]["gender_parity"]["value"] == pytest.approx(0.5)
    assert axg["scores"]["accuracy"]["value"] == pytest.approx(0.75)
    assert row["average"]["value"] == pytest.approx(0.5)  # RTE's alone
    table = " ".join(cli(*args).stdout.split())
    assert "superglue/axg (apart)" in table and "superglue/axb (no study)" in table
    for fmt in ("markdown", "html", "latex"):
        assert "axg" in cli(*args, "--format", fmt).stdout.lower(), fmt


def test_a_model_of_the_diagnostic_sets_alone_has_its_scores_in_the_benchmark_figure(
    cli, workspace, tmp_path
):
    """`report --benchmark superglue --model DIR` with only AX-g.jsonl in DIR: the table gives
    the model no average and its AX-g score apart, but the figure left the diagnostic sets out,
    so the model stood in the legend with no mark. The figure draws the sets apart (below the
    average), humans and model, and still no average for the model."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from annotate.report.benchmark.row import benchmark_report
    from annotate.report.render.figures import benchmark_figures

    NE = "not_entailment"
    rte = [{"source_id": "0", "gold": E}, {"source_id": "1", "gold": NE}]
    add_study(workspace.engine, "rte", "superglue/rte", rte, {"0": [E] * 3, "1": [E, E, NE]})
    items = [
        {"source_id": str(i), "gold": g, "fields": {"pair_id": 551646 + 2 * i, "hypothesis": h}}
        for i, (g, h) in enumerate([(E, "h0"), (E, "h0"), (NE, "h1"), (NE, "h1")])
    ]
    labels = {"0": [E] * 3, "1": [E] * 3, "2": [NE] * 3, "3": [E, E, NE]}
    add_study(workspace.engine, "axg", "superglue/axg", items, labels)
    model = tmp_path / "diag-only"
    model.mkdir()
    answers = [E, NE, NE, E]
    (model / "AX-g.jsonl").write_text(
        "".join(json.dumps({"idx": i, "label": a}) + "\n" for i, a in enumerate(answers))
    )
    report = benchmark_report(workspace.engine, "superglue", model_dirs=[model], bootstrap=0)
    (axg,) = report.diagnostics
    ax = Figure().add_subplot()
    benchmark_figures(report)[0].draw(ax)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == ["rte", "average", "axg (apart)"]
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "model diag-only"]
    xs = list(line.get_xdata())
    assert np.isnan(xs[0]) and np.isnan(xs[1])  # no RTE score, so no average
    assert xs[2] == pytest.approx(axg.models["diag-only"].value * 100)
