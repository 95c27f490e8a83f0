"""Who is decided, and admitted, before the median gate closes: what `annotate gate`, the
console's Gate screen and `gate --close` ask for every trainee, at 200 and 1,000 decided
annotators whose decisions each carry the cohort's names (as a median closing stores them).

Baseline in the same run: a query per trainee, loading each one's latest decision
(`gate.latest_decision`, what the plan did before), against `gate.latest_admissions`, one
query for everyone. Target: <= 1/10 of the baseline at 200.

    python -m bench.bench_gate [--sizes 200,1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select, update
from sqlmodel import Session

from annotate.protocol import gate
from annotate.store.models import Annotator, GateDecision
from bench.common import against_baseline, alternated, print_rows
from bench.store_builder import build_study


def per_trainee(session: Session, study_id: int, ids: list[int]) -> int:
    """The baseline: each trainee's latest decision, loaded one query at a time."""
    return sum(
        1 for aid in ids if (d := gate.latest_decision(session, study_id, aid)) and d.admitted
    )


def one_query(session: Session, study_id: int, ids: list[int]) -> int:
    admissions = gate.latest_admissions(session, study_id)
    return sum(1 for aid in ids if admissions.get(aid))


def measure(size: int, rounds: int, folder: Path) -> list[tuple[str, str]]:
    engine = build_study(f"sqlite:///{folder}/gate-{size}.db", 100, annotators=size)
    with Session(engine) as session:
        ids = list(session.scalars(select(Annotator.id)))
        names = list(session.scalars(select(Annotator.name)))
        session.execute(update(GateDecision).values(cohort=names, rule="median"))
        session.commit()
        study_id = session.scalar(select(GateDecision.study_id))

        def counted(count: Callable[[Session, int, list[int]], int]) -> Callable[[], None]:
            def call() -> None:
                assert count(session, study_id, ids) == size

            return call

        times = alternated(
            {"base": counted(per_trainee), "ours": counted(one_query)},
            rounds,
            between=session.expunge_all,
        )
    engine.dispose()
    return against_baseline(
        f"{size} trainees",
        ("a query per trainee", times["base"]),
        ("latest_admissions", times["ours"]),
        "one query/baseline",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,1000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += measure(size, args.rounds, Path(folder))
    print_rows("Gate: each trainee's latest decision, before a median closing", rows)


if __name__ == "__main__":
    main()
