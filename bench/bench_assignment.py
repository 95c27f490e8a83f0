"""How the time to serve the next test item (lease + commit) and to store an answer grows with
the study: 100 vs 100,000 test items, half of them already complete, the same run.

Baseline: the same engine calls on the 100-item study; target ratio <= 2x.

    python -m bench.bench_assignment
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.common import print_rows
from bench.store_builder import admitted_session, build_study

CALLS = 300


def measure(engine, study: str, calls: int = CALLS) -> tuple[float, float]:
    """Median seconds of next_item() and of submit() for a fresh admitted annotator."""
    session = admitted_session(engine, study, f"{study}-timer")
    next_times, submit_times = [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        item = session.next_item()
        t1 = time.perf_counter()
        assert item is not None
        session.submit(item, "entailment")
        t2 = time.perf_counter()
        next_times.append(t1 - t0)
        submit_times.append(t2 - t1)
    return statistics.median(next_times), statistics.median(submit_times)


def main() -> None:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (100, 100_000):
            engine = build_study(str(Path(tmp) / f"s{n}.db"), n, complete=n // 2, name=f"s{n}")
            results[n] = measure(engine, f"s{n}", calls=min(CALLS, n // 2))
            engine.dispose()
    small, large = results[100], results[100_000]
    print_rows(
        "next item (lease, commit) and submit (label, commit), median",
        [
            ("100 study items", f"next {small[0] * 1000:.2f} ms, submit {small[1] * 1000:.2f} ms"),
            (
                "100,000 study items",
                f"next {large[0] * 1000:.2f} ms, submit {large[1] * 1000:.2f} ms",
            ),
            ("ratio next (target <= 2x)", f"{large[0] / small[0]:.2f}x"),
            ("ratio submit", f"{large[1] / small[1]:.2f}x"),
        ],
    )


if __name__ == "__main__":
    main()
