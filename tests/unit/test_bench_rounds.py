"""bench_web --rounds: each round's figures from its runs, and each figure's median over the
rounds (bench/rounds.py)."""

from __future__ import annotations

import pytest

from bench.crowd_path import PhaseTally
from bench.rounds import clean, crowd_figures, summary_rows


def tally(test_ms: list[float], *, training: int = 0, arrival_ms: list[float] = ()) -> PhaseTally:
    t = PhaseTally()
    t.seconds["test"] = [ms / 1000 for ms in test_ms]
    t.seconds["training"] = [0.005] * training
    t.seconds["arrival"] = [ms / 1000 for ms in arrival_ms]
    return t


def result(
    test_ms,
    *,
    cpu: float,
    own_cpu: float | None = None,
    wall: float = 10.0,
    rss: float = 200.0,
    burst=(100.0,),
):
    """A crowd_run result: a paced tally, its CPU seconds (`own_cpu`: the page's processes
    alone, all of it by default), and a phase-by-phase run that spent 2 ms of CPU per test
    answer and 2.4 ms per training answer."""
    return {
        "paced": tally(test_ms),
        "wall": wall,
        "cpu": cpu,
        "own_cpu": cpu if own_cpu is None else own_cpu,
        "rss": rss,
        "idle": rss - 10,
        "phased": {
            "tally": tally([], arrival_ms=list(burst)),
            "cpu": {"test": 0.2, "training": 0.24},
            "counts": {"test": 100, "training": 100},
        },
    }


def test_a_rounds_figures_are_the_ratios_of_its_own_runs():
    annotate = result([10.0] * 98 + [30.0] * 2, cpu=6.0, burst=[300.0])
    bare = result([5.0] * 98 + [20.0] * 2, cpu=2.0, burst=[200.0])
    figures = crowd_figures({"annotate": annotate, "bare": bare})
    assert figures["test_p99"] == pytest.approx(30.0)
    assert figures["bare_test_p99"] == pytest.approx(20.0)
    assert figures["test_p99_ratio"] == pytest.approx(1.5)
    assert figures["rate_ratio"] == pytest.approx(1.0)  # as many answers in as long
    assert figures["cpu_ratio"] == pytest.approx(3.0)  # 60 against 20 ms per answer
    assert figures["burst_ratio"] == pytest.approx(1.5)
    assert figures["training_ratio"] == pytest.approx(1.2)
    assert figures["rss"] == 200.0
    assert figures["steady_cpu_ratio"] is None  # the runs ended before all were at test
    assert "pg_cpu_ratio" not in figures  # no PostgreSQL run


def test_postgresql_is_compared_with_annotate_on_sqlite():
    sqlite = result([10.0] * 100, cpu=3.0)
    postgres = result([17.0] * 100, cpu=4.5, own_cpu=3.6)  # 0.9 s of it PostgreSQL's
    figures = crowd_figures(
        {"annotate": sqlite, "bare": result([5.0] * 100, cpu=1.0), "postgresql": postgres}
    )
    assert figures["pg_test_p99_ratio"] == pytest.approx(1.7)
    assert figures["pg_cpu_ratio"] == pytest.approx(1.5)
    assert figures["pg_own_cpu_ratio"] == pytest.approx(1.2)  # annotate's processes alone


def test_a_run_without_test_answers_measures_no_test_p99():
    figures = crowd_figures({"annotate": result([], cpu=1.0), "bare": result([5.0], cpu=1.0)})
    assert figures["test_p99"] is None and figures["test_p99_ratio"] is None


def test_the_summary_gives_each_figures_median_and_every_rounds_value():
    rounds = [
        {"cpu_ratio": 2.26, "test_p99": 21.0, "steady_cpu_ratio": None},
        {"cpu_ratio": 1.78, "test_p99": 18.0, "steady_cpu_ratio": 1.5},
        {"cpu_ratio": 2.01, "test_p99": 28.0, "steady_cpu_ratio": 1.9},
    ]
    rows = dict(summary_rows(rounds))
    assert rows["ratio CPU per answer annotate to bare page"] == (
        "median 2.01x; rounds 2.26x, 1.78x, 2.01x"
    )
    assert rows["test answer -> next item p99, annotate"] == "median 21 ms; rounds 21, 18, 28"
    # a round that could not measure a figure is shown as such, and left out of its median
    assert rows["ratio CPU per test answer, all at the test items"] == (
        "median 1.70x; rounds -, 1.50x, 1.90x"
    )
    # figures no round measured (PostgreSQL's, without --postgres) are not listed
    assert not any("PostgreSQL" in label for label in rows)


def test_a_round_holds_only_if_every_invariant_does():
    holds = [("annotate check", "clean"), ("no lost label", "yes (10 / 10)")]
    assert clean(holds)
    assert not clean([*holds, ("annotate check", "NOT CLEAN")])
    assert not clean([("no lost label", "NO (10 / 9)")])
