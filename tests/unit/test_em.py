"""Dawid–Skene and MACE to convergence (`aggregation.em`): the same answers as crowd-kit on
well-posed studies, the converged fit where crowd-kit stops early, and MACE's answers rebuilt
from the label export with the documented procedure."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import numpy as np
import pytest

from annotate.report.aggregation.em import dawid_skene, dawid_skene_log_likelihood, mace
from tests.unit.test_report import add_study, report_json

CB = ["entailment", "contradiction", "neutral"]


def crowd(rng, n_tasks, n_workers, per, accuracy, prior=None, classes=3):
    truth = rng.choice(classes, n_tasks, p=prior)
    rows = []
    for t in range(n_tasks):
        for w in rng.choice(n_workers, per, replace=False):
            a = truth[t] if rng.random() < accuracy[w] else rng.integers(0, classes)
            rows.append((t, w, a))
    return np.array(rows).T, truth


def crowdkit_ds(task, worker, answer, **kwargs):
    pd = pytest.importorskip("pandas")
    aggregation = pytest.importorskip("crowdkit.aggregation")
    frame = pd.DataFrame({"task": task, "worker": worker, "label": answer})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = aggregation.DawidSkene(**kwargs).fit(frame)
    n_workers, n_classes = int(worker.max()) + 1, 3
    errors = np.full((n_workers, n_classes, n_classes), 0.0)
    for (w, a), row in fit.errors_.iterrows():
        for t in fit.errors_.columns:
            errors[int(w), int(t), int(a)] = row[t]
    priors = fit.priors_.reindex(range(n_classes)).fillna(0).to_numpy()
    ll = dawid_skene_log_likelihood(task, worker, answer, priors, errors)
    return fit.labels_.sort_index().to_numpy(), ll


def test_dawid_skene_and_mace_agree_with_crowd_kit_on_well_posed_studies():
    pd = pytest.importorskip("pandas")
    aggregation = pytest.importorskip("crowdkit.aggregation")
    rng = np.random.default_rng(3)
    for _ in range(2):
        (task, worker, answer), _truth = crowd(rng, 80, 6, 5, rng.uniform(0.6, 0.95, 6))
        ds = dawid_skene(task, worker, answer, 80, 6, 3)
        assert ds.converged and ds.iterations < 1000
        theirs, their_ll = crowdkit_ds(task, worker, answer, n_iter=1000, tol=1e-10)
        assert (ds.answers == theirs).mean() >= 0.95
        assert ds.log_likelihood >= their_ll - 1e-6
        m = mace(task, worker, answer, 80, 6, 3, seed=1)
        frame = pd.DataFrame({"task": task, "worker": worker, "label": answer})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ck = aggregation.MACE(n_iter=100, n_restarts=3, random_state=1).fit(frame)
        assert m.converged
        assert (m.answers == ck.labels_.sort_index().to_numpy()).mean() >= 0.95


def early_stop_cb_study():
    """A made-up CB study (56 items, 8 annotators of mixed skill, 5 per item) on which
    crowd-kit's Dawid–Skene stops while the log-likelihood still rises."""
    rng = np.random.default_rng(11)
    for _ in range(13):  # the 13th study drawn with this seed
        truth = rng.choice(3, 56, p=[0.45, 0.45, 0.1])
        accuracy = rng.uniform(0.3, 0.9, 8)
        rows = []
        for t in range(56):
            for w in rng.choice(8, 5, replace=False):
                a = truth[t] if rng.random() < accuracy[w] else rng.integers(0, 3)
                rows.append((t, w, a))
    return np.array(rows).T, truth


def test_the_report_gives_the_converged_dawid_skene_where_crowd_kit_stops_early(cli, workspace):
    (task, worker, answer), truth = early_stop_cb_study()
    early, early_ll = crowdkit_ds(task, worker, answer)  # crowd-kit's defaults
    runs = [early_ll] + [crowdkit_ds(task, worker, answer, n_iter=n)[1] for n in (10, 1000)]
    labels: dict[str, list[str | None]] = {str(t): [None] * 8 for t in range(56)}
    for t, w, a in zip(task, worker, answer, strict=True):
        labels[str(t)][w] = CB[a]
    add_study(
        workspace.engine,
        "cb-em",
        "superglue/cb",
        [{"source_id": str(t), "gold": CB[g]} for t, g in enumerate(truth)],
        labels,
    )
    r = report_json(cli, "cb-em", "--bootstrap", "0")
    m = r["model_aggregation"]
    fit = next(f for f in m["fits"] if f["method"] == "dawid_skene")
    assert fit["converged"] is True and fit["tolerance"] == 1e-6
    assert fit["log_likelihood"] >= max(runs) - 1e-6
    assert fit["log_likelihood"] > early_ll + 1  # crowd-kit's early stop is a worse fit
    # The converged answers differ from crowd-kit's early-stopped ones.
    ours = dawid_skene(task, worker, answer, 56, 8, 3)
    assert ours.log_likelihood == pytest.approx(fit["log_likelihood"])
    assert (ours.answers != early).sum() >= 5
    shown = {d["item"]: d["answers"]["dawid_skene"] for d in m["disagreements"]}
    for t in np.flatnonzero(ours.answers != early):
        if str(t) in shown:
            assert shown[str(t)] == CB[ours.answers[t]]
    text = cli("report", "cb-em", "--bootstrap", "0", "--format", "markdown").stdout
    assert "## Model fits" in text and "majority vote + 10 random (seed" in text


def test_the_reports_mace_answers_are_rebuilt_from_the_label_export(cli, workspace, tmp_path: Path):
    """The documented procedure: classes coded in sorted order, annotators by name, items in
    the export's order; `mace(..., seed=the study's seed)`; each item's most probable class."""
    (task, worker, answer), truth = early_stop_cb_study()
    labels: dict[str, list[str | None]] = {str(t): [None] * 8 for t in range(56)}
    for t, w, a in zip(task, worker, answer, strict=True):
        labels[str(t)][w] = CB[a]
    add_study(
        workspace.engine,
        "cb-mace",
        "superglue/cb",
        [{"source_id": str(t), "gold": CB[g]} for t, g in enumerate(truth)],
        labels,
    )
    r = report_json(cli, "cb-mace", "--bootstrap", "0", "--seed", "17")
    assert cli("export", "cb-mace", "--to", tmp_path, "--format", "labels").code == 0
    with (tmp_path / "cb-mace-labels.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    items = list(dict.fromkeys(row["item_id"] for row in rows))
    classes = sorted({row["value"] for row in rows} | set(CB))
    annotators = sorted({row["annotator"] for row in rows})
    fit = mace(
        np.array([items.index(row["item_id"]) for row in rows]),
        np.array([annotators.index(row["annotator"]) for row in rows]),
        np.array([classes.index(row["value"]) for row in rows]),
        len(items),
        len(annotators),
        len(classes),
        seed=17,
    )
    rebuilt = {item: classes[c] for item, c in zip(items, fit.answers, strict=True)}
    fits = {f["method"]: f for f in r["model_aggregation"]["fits"]}
    assert fits["mace"]["seed"] == 17 and fits["mace"]["restarts"] == 10
    assert fit.log_likelihood == pytest.approx(fits["mace"]["log_likelihood"])
    # The report lists MACE's answer wherever a model differs from the majority; elsewhere
    # MACE gives the majority's answer.
    shown = {d["item"]: d for d in r["model_aggregation"]["disagreements"]}
    majority = {}
    for item in items:
        votes = [row["value"] for row in rows if row["item_id"] == item]
        top = max(votes.count(v) for v in votes)
        winners = sorted({v for v in votes if votes.count(v) == top})
        majority[item] = winners[0] if len(winners) == 1 else None
    for item in items:
        if item in shown:
            assert shown[item]["answers"]["mace"] == rebuilt[item]
        elif majority[item] is not None:
            assert rebuilt[item] == majority[item]
    mace_score = next(e for e in r["model_aggregation"]["estimators"] if e["method"] == "mace")
    gold = {str(t): CB[g] for t, g in enumerate(truth)}
    accuracy = np.mean([rebuilt[i] == gold[i.split("/")[-1]] for i in items])
    assert mace_score["scores"]["accuracy"]["value"] == pytest.approx(accuracy)
