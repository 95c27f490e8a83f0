"""The bootstrap that refits Dawid–Skene and MACE (issue 27.5): the batched, weighted EM is the
report's EM when every weight is one, a weight of two is the item labelled twice, and the
report's model intervals say whether they include the refit and widen by its design effect."""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import batch_em, em, refit
from annotate.report.aggregation.latent import fit_in_interval, model_aggregation
from annotate.report.aggregation.study import final_aggregate
from annotate.report.data.loading import StudyData
from annotate.scoring.intervals import effective_units, quoted_interval, wilson_interval
from tests.unit.test_calibration_models import rte_study


def _labels(seed: int, n_tasks: int = 80, n_workers: int = 5, n_classes: int = 3):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, n_classes, n_tasks)
    task = np.repeat(np.arange(n_tasks), n_workers)
    worker = np.tile(np.arange(n_workers), n_tasks)
    skill = np.linspace(0.55, 0.9, n_workers)
    right = rng.random(len(task)) < skill[worker]
    wrong = (gold[task] + rng.integers(1, n_classes, len(task))) % n_classes
    return task, worker, np.where(right, gold[task], wrong), gold


def test_unit_weights_give_the_reports_dawid_skene_and_mace_fits():
    task, worker, answer, _ = _labels(1)
    ones = np.ones((2, 80))
    ds = em.dawid_skene(task, worker, answer, 80, 5, 3)
    batch = batch_em.dawid_skene_batch(task, worker, answer, ones, 80, 5, 3)
    np.testing.assert_allclose(batch.posterior[1], ds.posterior, atol=1e-12)
    assert batch.log_likelihood[0] == np.float64(ds.log_likelihood) or np.isclose(
        batch.log_likelihood[0], ds.log_likelihood
    )
    mace = em.mace(task, worker, answer, 80, 5, 3, seed=0, restarts=0)
    shares = em._shares(task, answer, 80, 3)
    mb = batch_em.mace_batch(task, worker, answer, ones, 80, 5, 3, start=shares)
    np.testing.assert_allclose(mb.posterior[0], mace.posterior, atol=1e-12)
    assert (batch_em.answers_of(mb.posterior)[0] == mace.answers).all()


def test_a_weight_of_two_is_the_item_labelled_twice():
    task, worker, answer, _ = _labels(2)
    weight = np.random.default_rng(3).integers(0, 3, 80).astype(float)
    batch = batch_em.dawid_skene_batch(task, worker, answer, weight[None, :], 80, 5, 3)
    copies = np.repeat(np.arange(80), weight.astype(int))
    rows = np.concatenate([np.flatnonzero(task == t) for t in copies])
    flat = em.dawid_skene(
        np.repeat(np.arange(len(copies)), 5), worker[rows], answer[rows], len(copies), 5, 3
    )
    assert np.isclose(batch.log_likelihood[0], flat.log_likelihood)


def _study(n_items: int, seed: int) -> StudyData:
    _, _, answer, gold = _labels(seed, n_items, 5, 2)
    return rte_study(gold, answer.reshape(n_items, 5))


def _section(data: StudyData, bootstrap: int = 300):
    coded, final = final_aggregate(data)
    section = model_aggregation(coded, final, list(data.spec.metrics), bootstrap, 5, True)
    assert section is not None and section.available
    return {row.method: row for row in section.estimators}


def _with_unlabelled(data: StudyData, per_item: int) -> StudyData:
    """The same labels on a sample `per_item` times larger, each labelled item among
    `per_item - 1` (with gold) that nobody has labelled yet: early in a large study."""
    import dataclasses

    import pandas as pd

    n = len(data.items)
    at = np.arange(n) * per_item + per_item // 2  # where the labelled items now sit
    source = np.array([f"u{p}" for p in range(n * per_item)], dtype=object)
    source[at] = data.items["source_id"].to_numpy()
    gold = np.array(["entailment", "not_entailment"] * (n * per_item // 2), dtype=object)
    gold[at] = data.items["gold"].to_numpy()
    items = pd.DataFrame(
        {
            "item_id": np.arange(n * per_item),
            "source_id": list(source),
            "position": np.arange(n * per_item),
            "gold": list(gold),
            "tags": [None] * (n * per_item),
            "pair_id": [None] * (n * per_item),
        }
    )[list(data.items.columns)]
    labels = data.labels.assign(item_id=at[data.labels["item_id"].to_numpy()])
    return dataclasses.replace(data, items=items, labels=labels)


def test_the_refit_runs_on_the_labelled_items_only(monkeypatch):
    """Early in a large study most sampled items have no label. The bootstrap that refits
    Dawid–Skene and MACE fits the labelled items only (it sized its replicates' arrays by
    every sampled item: 17.6 s and 720 MB for a report at 20,000 items and 74 labels), and the
    models' scores, intervals and competences are those of the same labels without them."""
    small = _study(60, 4)
    large = _with_unlabelled(small, 50)
    fitted: list[tuple[int, tuple[int, ...]]] = []
    for name in ("dawid_skene_batch", "mace_batch"):

        def spy(task, worker, answer, weight, n_tasks, *rest, _real=getattr(batch_em, name), **kw):
            fitted.append((n_tasks, weight.shape))
            return _real(task, worker, answer, weight, n_tasks, *rest, **kw)

        monkeypatch.setattr(batch_em, name, spy)
    sections = []
    for data in (small, large):
        coded, final = final_aggregate(data)
        section = model_aggregation(coded, final, list(data.spec.metrics), 300, 5, True)
        assert section is not None and section.available
        sections.append(section.model_dump())
    replicates = refit.REFIT_REPLICATES
    assert fitted == [(60, (replicates, 60))] * 4  # both models, both studies
    assert all(
        "design effect" in row["interval"]["method"]
        for row in sections[1]["estimators"]
        if row["method"] != "majority"
    )
    assert sections[1] == sections[0]


def test_a_small_study_refits_and_its_interval_is_no_narrower_than_the_fixed_fit():
    rows = _section(_study(60, 4))
    for method in ("dawid_skene", "mace"):
        row = rows[method]
        assert row.interval is not None
        assert "design effect" in row.interval.method
        assert f"{refit.REFIT_LABELS:,} labels" in row.interval.method
        value = row.task_score.value
        assert value is not None
        low, high = wilson_interval(value * 60, 60)
        assert low is not None and high is not None
        assert row.interval.low <= low + 1e-12 and row.interval.high >= high - 1e-12
        assert row.interval.low <= value <= row.interval.high
    assert "nothing fitted" in rows["majority"].interval.method


def test_above_the_limit_the_fit_is_held_fixed_and_the_method_says_so(monkeypatch):
    monkeypatch.setattr(refit, "REFIT_LABELS", 100)
    rows = _section(_study(60, 4))  # 300 labels
    row = rows["dawid_skene"]
    assert row.interval is not None and "held fixed" in row.interval.method
    value = row.task_score.value
    assert value is not None
    assert (row.interval.low, row.interval.high) == wilson_interval(value * 60, 60)


def test_without_bootstrap_replicates_nothing_is_refitted():
    rows = _section(_study(60, 4), bootstrap=0)
    assert "no bootstrap replicates" in rows["mace"].interval.method


def test_the_design_effect_widens_wilson_and_the_bootstrap_at_the_one_rule():
    plain = quoted_interval(["accuracy"], "classification", False, 0.8, 100, None, None)
    wide = quoted_interval(
        ["accuracy"], "classification", False, 0.8, 100, None, None, design_effect=2.0
    )
    assert plain is not None and wide is not None
    assert (wide.low, wide.high) == wilson_interval(0.8 * 50, 50)
    boot = quoted_interval(["mcc"], "classification", False, 0.7, 100, 0.6, 0.75, design_effect=4.0)
    assert boot is not None
    assert np.isclose(boot.low, 0.5) and np.isclose(boot.high, 0.8)
    # Two metrics: the score-type interval at the effective units, divided by the effect.
    n_eff = effective_units(0.7, 100, 100, 0.6, 0.75)
    score = quoted_interval(
        ["accuracy", "f1"], "classification", False, 0.7, 100, 0.6, 0.75, design_effect=4.0
    )
    assert score is not None
    assert (score.low, score.high) == wilson_interval(0.7 * n_eff / 4, n_eff / 4)


def test_multirc_and_cb_refit_through_the_bootstrap_widened_by_the_design_effect(
    cli, workspace, monkeypatch
):
    """Tasks scored by more than accuracy quote the score-type interval at their effective
    units: a MultiRC study (answers resampled by question) and a CB study (accuracy and
    macro-F1) get the refit's method, an interval around the score, wider than with the model
    held fixed, and every other number as without the refit."""
    from tests.unit.test_report import add_study, report_json

    rng = np.random.default_rng(8)
    items, labels = [], {}
    for q in range(30):
        gold = {str(3 * q + a): str(int(rng.random() < 0.5)) for a in range(3)}
        items.append({"source_id": f"q{q}", "gold": gold})
        labels[f"q{q}"] = [
            {a: (g if rng.random() < skill else str(1 - int(g))) for a, g in gold.items()}
            for skill in (0.9, 0.8, 0.7, 0.65, 0.6)
        ]
    add_study(workspace.engine, "mrc", "superglue/multirc", items, labels)
    classes = ["contradiction", "entailment", "neutral"]
    cb_items, cb_labels = [], {}
    for i in range(40):
        g = classes[i % 3]
        cb_items.append({"source_id": str(i), "gold": g})
        cb_labels[str(i)] = [
            g if rng.random() < skill else classes[(i + 1) % 3] for skill in (0.9, 0.75, 0.6)
        ]
    add_study(workspace.engine, "cb", "superglue/cb", cb_items, cb_labels)
    for name in ("mrc", "cb"):
        r = report_json(cli, name, "--bootstrap", "200")
        rows = {e["method"]: e for e in r["model_aggregation"]["estimators"]}
        for method in ("dawid_skene", "mace"):
            interval = rows[method]["interval"]
            assert "divided by" in interval["method"], name
            assert fit_in_interval(interval["method"]) == "model refitted in the bootstrap"
            value = rows[method]["task_score"]["value"]
            assert interval["low"] <= value <= interval["high"]
        assert "nothing fitted" in rows["majority"]["interval"]["method"]
        with monkeypatch.context() as m:
            m.setattr(refit, "REFIT_LABELS", 0)
            held = report_json(cli, name, "--bootstrap", "200")
        for e in held["model_aggregation"]["estimators"]:
            if e["method"] != "majority":
                assert fit_in_interval(e["interval"]["method"]) == "model held fixed"
                wide = rows[e["method"]]["interval"]  # refitted: wider than held fixed
                assert wide["low"] <= e["interval"]["low"]
                assert wide["high"] >= e["interval"]["high"]
        for report in (r, held):
            for e in report["model_aggregation"]["estimators"]:
                e.pop("interval")
        assert r == held, name  # the refit changes the model intervals only


def test_the_refit_uses_the_reports_own_item_draws():
    """One resampling: the replicates refitted are the first of the draws the aggregation
    intervals' bootstrap already made (scored with the fixed answers they give the same
    replicates)."""
    from annotate.scoring.intervals import rng_for, weight_chunks
    from annotate.scoring.scorers import score_with_intervals, scorer_for

    coded, final = final_aggregate(_study(60, 4))
    scorer = scorer_for(coded, final.pred)
    fixed: list[np.ndarray] = []
    score_with_intervals(scorer, ["accuracy"], 1000, 5, refit.PURPOSE, fixed)
    draws = np.vstack(list(weight_chunks(scorer.n_units, 200, rng_for(5, refit.PURPOSE))))
    np.testing.assert_array_equal(scorer.weighted(draws)["accuracy"], fixed[0][:200])


def test_the_tables_say_whether_the_model_was_refitted_or_held_fixed(monkeypatch):
    """The text and Markdown reports' "Model-based aggregation" table says beside each 95% CI
    what the JSON's method says: the model refitted in the bootstrap (a small study), held
    fixed (above the refit limit), or nothing fitted (the majority)."""
    from rich.console import Console

    from annotate.report.build import build_report
    from annotate.report.render.markdown import render_markdown
    from annotate.report.render.table import render_table

    def rows_of(report) -> dict[str, list[str]]:
        text = render_markdown(report)
        block = text.split("## Model-based aggregation\n\n", 1)[1].split("\n\n", 1)[0]
        lines = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()]
        assert lines[0] == ["Aggregation", "Score", "95% CI", "Model in the CI", "Detail"]
        return {line[0]: line for line in lines[2:]}

    def terminal(report) -> str:
        console = Console(width=200, record=True)
        render_table(report, console)
        return console.export_text()

    data = _study(60, 4)
    for limit, words in (
        (refit.REFIT_LABELS, "model refitted in the bootstrap"),
        (0, "model held fixed"),
    ):
        with monkeypatch.context() as m:
            m.setattr(refit, "REFIT_LABELS", limit)
            report = build_report(data, bootstrap=200)
        methods = {e.title: e.interval.method for e in report.model_aggregation.estimators}
        rows = rows_of(report)
        for title, method in methods.items():
            expected = "nothing fitted" if "nothing fitted" in method else words
            assert rows[title][3] == expected, method
        assert words in terminal(report)
