"""The crowd benchmark in rounds (`bench_web --rounds N`): each round's figures, and each
figure's median over the rounds.

On a shared machine one run's ratios move by a tenth or more from one run to the next (other
processes' load, the disk's own moments): in six runs of one session the whole run's CPU per
answer, annotate to the bare page, read 1.78 to 2.26. With `--rounds N` annotate and the bare
page (and PostgreSQL) run N times, alternating, each round on a fresh copy of the store, and
the summary gives each figure's median beside every round's value: each ratio is measured
within one round, on the same machine at the same moment, and the median of N of them is
moved far less by one moment of load than a single run is."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

Figures = dict[str, float | None]
"""One round's figures by key (FIGURES); None where the round could not measure one (a run
that ended before every worker was at the test items)."""


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    unit: str
    """"x" for a ratio, else the unit its values are in (ms, MB)."""


FIGURES = (
    Figure("test_p99", "test answer -> next item p99, annotate", "ms"),
    Figure("bare_test_p99", "test answer -> next item p99, bare page", "ms"),
    Figure("test_p99_ratio", "ratio test answer p99 annotate to bare page", "x"),
    Figure("rate_ratio", "ratio answers/s annotate to bare page", "x"),
    Figure("cpu_ratio", "ratio CPU per answer annotate to bare page", "x"),
    Figure("steady_cpu_ratio", "ratio CPU per test answer, all at the test items", "x"),
    Figure("burst_p99", "arrival burst: first item p99, annotate", "ms"),
    Figure("burst_ratio", "ratio arrival burst p99 annotate to bare page", "x"),
    Figure("training_ratio", "ratio CPU training answer to test answer", "x"),
    Figure("rss", "server RSS, annotate", "MB"),
    Figure("pg_test_p99_ratio", "ratio test answer p99 PostgreSQL to SQLite", "x"),
    Figure("pg_cpu_ratio", "ratio CPU per answer PostgreSQL to SQLite", "x"),
    Figure(
        "pg_steady_cpu_ratio", "ratio CPU per test answer, all at the test items, PG to SQLite", "x"
    ),
    Figure(
        "pg_own_cpu_ratio", "ratio CPU per answer, annotate's processes alone, PG to SQLite", "x"
    ),
)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _p99(tally, phase: str) -> float | None:
    """A phase's p99 in milliseconds; None where the run had none of its requests."""
    return tally.pct(phase, 0.99) if tally.seconds[phase] else None


def cpu_per_answer(result: dict, *, own: bool = False) -> float:
    """Server CPU milliseconds per answer of a paced run, arrivals and training included;
    `own`: the page's processes alone (a database server's not counted)."""
    return result["own_cpu" if own else "cpu"] / max(result["paced"].answers, 1) * 1000


def phase_cpu(result: dict, phase: str) -> float:
    """Server CPU milliseconds per request of one phase of the phase-by-phase run."""
    phased = result["phased"]
    return phased["cpu"].get(phase, 0.0) / max(phased["counts"].get(phase, 0), 1) * 1000


def crowd_figures(results: dict[str, dict]) -> Figures:
    """One round's figures, from bench_web.crowd_run's results ("annotate", "bare" and, with
    --postgres, "postgresql")."""
    a, b = results["annotate"], results["bare"]
    pa, pb = a["paced"], b["paced"]
    ta, tb = a["phased"]["tally"], b["phased"]["tally"]
    figures: Figures = {
        "test_p99": _p99(pa, "test"),
        "bare_test_p99": _p99(pb, "test"),
        "test_p99_ratio": _ratio(_p99(pa, "test"), _p99(pb, "test")),
        "rate_ratio": _ratio(pa.answers / a["wall"], pb.answers / b["wall"]),
        "cpu_ratio": _ratio(cpu_per_answer(a), cpu_per_answer(b)),
        "steady_cpu_ratio": _ratio(
            pa.steady_cpu_per_test_answer(), pb.steady_cpu_per_test_answer()
        ),
        "burst_p99": _p99(ta, "arrival"),
        "burst_ratio": _ratio(_p99(ta, "arrival"), _p99(tb, "arrival")),
        "training_ratio": _ratio(phase_cpu(a, "training"), phase_cpu(a, "test")),
        "rss": a["rss"],
    }
    if (p := results.get("postgresql")) is not None:
        pp = p["paced"]
        figures["pg_test_p99_ratio"] = _ratio(_p99(pp, "test"), _p99(pa, "test"))
        figures["pg_cpu_ratio"] = _ratio(cpu_per_answer(p), cpu_per_answer(a))
        figures["pg_own_cpu_ratio"] = _ratio(
            cpu_per_answer(p, own=True), cpu_per_answer(a, own=True)
        )
        figures["pg_steady_cpu_ratio"] = _ratio(
            pp.steady_cpu_per_test_answer(), pa.steady_cpu_per_test_answer()
        )
    return figures


def _shown(value: float, unit: str) -> str:
    return f"{value:.2f}x" if unit == "x" else f"{value:.0f}"


def summary_rows(rounds: Sequence[Figures]) -> list[tuple[str, str]]:
    """Each figure measured in any round: its median, then every round's value in order ("-"
    where a round could not measure it)."""
    rows = []
    for figure in FIGURES:
        values = [r.get(figure.key) for r in rounds]
        measured = [v for v in values if v is not None]
        if not measured:
            continue
        unit = "" if figure.unit == "x" else f" {figure.unit}"
        median = _shown(statistics.median(measured), figure.unit)
        each = ", ".join("-" if v is None else _shown(v, figure.unit) for v in values)
        rows.append((figure.label, f"median {median}{unit}; rounds {each}"))
    return rows


def clean(rows: Sequence[tuple[str, str]]) -> bool:
    """Whether a round's invariant rows (bench_web.invariants) all hold."""
    return not any(value.startswith("NO") for _, value in rows)
