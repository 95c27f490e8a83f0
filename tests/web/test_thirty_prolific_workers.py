"""Issue 22's acceptance run: 30 Prolific workers against a real `annotate serve STUDY` process.

The study is made as the recipe "A baseline on Prolific, from files" makes one (import, `study
create --crowd prolific --crowd-config … --set max_test_items_per_annotator=20`), with a
threshold gate. Each worker is an HTTP client that follows the page's own requests: the
Prolific link with its own PROLIFIC_PID, STUDY_ID and SESSION_ID, consent, the guidelines,
training with its feedback, the gate's decision, a batch of 20 test items, and the final page
with the Prolific redirect (cc=CODE). One worker in six answers training wrongly and is screened
out. The 25 admitted workers' 25 x 20 labels fill the 100 test items to exactly k = 5.

Workers run in 5 waves of 6 at once: inside a wave the five admitted workers fill one block
of 20 items (the assignment serves the item closest to complete first, and an item one of
them has not labelled always has room for them), so the last wave never finds only items it
has already answered, and every item reaching exactly k is certain, not lucky.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.crowd_helpers import prolific_query
from tests.engine_helpers import rte_rows, write_jsonl
from tests.web.test_page import csrf, screen, ticket
from tests.web.test_two_servers import start_server

pytestmark = pytest.mark.slow
httpx = pytest.importorskip("httpx")

ANNOTATE = (sys.executable, "-m", "annotate")
STUDY = "rte-prolific"
STUDY_ID = "6650a1b2c3d4e5f6a7b8c9d0"
K = 5
BATCH = 20
TRAINING = 4
WAVES, PER_WAVE = 5, 6
WORKERS = WAVES * PER_WAVE  # 30
SCREENED = {n for n in range(1, WORKERS + 1) if n % PER_WAVE == 0}  # one a wave
ADMITTED = WORKERS - len(SCREENED)  # 25
TEST_ITEMS = ADMITTED * BATCH // K  # 100: every slot of every item taken
RATE, BASE = 360_000.0, 0.5  # per hour: 100 units a second, so the page's sessions, a
# fraction of a second long, earn more than the base (any of them past 5 ms)
CODES = {"completed": "DONE2026", "screened_out": "SCREENED1", "study_full": "FULL2026"}
GATE_NUMBER = re.compile(r"gate (\d+) was repaired")

CROWD_TOML = f'''platform = "prolific"
study_ids = ["{STUDY_ID}"]
consent = """
This study is run by a test lab. You will label pairs of sentences. Your answers are stored
under a pseudonym. You may stop at any time.
"""
guidelines = "Work at your own pace; there is no time limit per item."

[codes]
completed = "{CODES["completed"]}"
screened_out = "{CODES["screened_out"]}"
study_full = "{CODES["study_full"]}"
'''


def cli(db: str, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [*ANNOTATE, "--db", db, *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    assert done.returncode == 0, f"annotate {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def truth(page: str) -> str:
    """The gold of the item on screen, from the fixture's own sentences (gate N: N even is
    entailment), so a careful worker can be right and a careless one wrong on purpose."""
    n = int(GATE_NUMBER.search(page)[1])
    return "entailment" if n % 2 == 0 else "not_entailment"


def opposite(value: str) -> str:
    return "not_entailment" if value == "entailment" else "entailment"


async def play(base: str, n: int) -> dict:
    """Worker n: the Prolific link to the final page, as the page's own links and forms lead."""
    careless = n in SCREENED
    # Its own client: its own cookie (session) and CSRF token, as a browser has.
    async with httpx.AsyncClient(base_url=base, headers={"Origin": base}, timeout=60) as c:
        page = await c.get("/", params=prolific_query(n, STUDY_ID), follow_redirects=True)
        assert screen(page) == "consent", page.text[-500:]
        page = await c.post("/consent", data={"csrf": csrf(page), "agree": "yes"})
        assert screen(page) == "guidelines", page.text[-500:]
        page = await c.post("/start", data={"csrf": csrf(page)})
        phases: list[str] = []
        for _ in range(TRAINING * 2 + BATCH * 2 + 5):
            name = screen(page)
            if name == "feedback":
                page = await c.get("/screen", params={"next": "1"})
            elif name == "item":
                phase = re.search(r'data-phase="(\w+)"', page.text)[1]
                phases.append(phase)
                right = truth(page.text)
                answer = opposite(right) if careless and phase == "training" else right
                page = await c.post(
                    "/answer",
                    data={"csrf": csrf(page), "ticket": ticket(page), "answer": answer},
                )
            else:
                break
        return {"n": n, "screen": screen(page), "text": page.text, "phases": phases}


async def waves(base: str) -> list[dict]:
    results: list[dict] = []
    for w in range(WAVES):
        wave = range(w * PER_WAVE + 1, (w + 1) * PER_WAVE + 1)
        results += await asyncio.gather(*(play(base, n) for n in wave))
    return results


def found(data, key: str) -> dict:
    """The first object in `data` (JSON) that has `key`."""
    todo = [data]
    while todo:
        node = todo.pop(0)
        if isinstance(node, dict):
            if key in node:
                return node
            todo += node.values()
        elif isinstance(node, list):
            todo += node
    raise AssertionError(f"no {key!r} in {data!r}")


def stamp(value: str | None) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def visit_spans(db: Path) -> dict[str, list[tuple[datetime, datetime]]]:
    """Each Prolific worker's visits from the `visit` table: arrival to departure (to its last
    sign of life if it never departed), never ending before the arrival."""
    spans: dict[str, list[tuple[datetime, datetime]]] = defaultdict(list)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT a.platform_id, v.arrived_at, v.last_seen_at, v.departed_at FROM visit v "
            "JOIN annotator a ON a.id = v.annotator_id JOIN study s ON s.id = v.study_id "
            "WHERE s.name = ? AND a.platform = 'prolific'",
            (STUDY,),
        ).fetchall()
    for platform_id, arrived, seen, departed in rows:
        start = stamp(arrived)
        end = stamp(departed) or stamp(seen)
        spans[platform_id].append((start, max(start, end)))
    return spans


def expected_bonus(spans: dict[str, list[tuple[datetime, datetime]]]) -> dict[str, str]:
    """annotate/protocol/pay.py's rule, recomputed: a worker's time is the union of their
    visits; the bonus is that time at the rate less the base pay, at least 0, in cents;
    workers owed nothing are left out of the file."""
    bonus = {}
    for platform_id, visits in spans.items():
        merged: list[list[datetime]] = []
        for a, b in sorted(visits):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        seconds = 0.0
        for a, b in merged:
            seconds += (b - a).total_seconds()
        amount = round(max(0.0, seconds / 3600 * RATE - BASE), 2)
        if amount > 0:
            bonus[platform_id] = f"{amount:.2f}"
    return bonus


def test_thirty_prolific_workers_fill_every_item_to_k_and_are_paid_their_time(tmp_path: Path):
    db = str(tmp_path / "store.db")
    data = tmp_path / "RTE"
    write_jsonl(data / "val.jsonl", rte_rows(TRAINING))
    write_jsonl(data / "test.jsonl", rte_rows(TEST_ITEMS, 1000))
    (tmp_path / "rte-prolific.toml").write_text(CROWD_TOML)
    cli(db, "import", "superglue/rte", str(data), cwd=tmp_path)
    cli(
        db, "study", "create", STUDY, "--task", "superglue/rte", "--protocol", "superglue-2019",
        "--train", "val", "--test", "test", "--crowd", "prolific",
        "--crowd-config", "rte-prolific.toml",
        "--set", "max_test_items_per_annotator=20",
        "--set", "gate_rule=threshold", "--set", "gate_threshold=0.75",
        "--set", f"training_items={TRAINING}", "--set", f"gate_min_items={TRAINING}",
        "--set", f"test_sample={TEST_ITEMS}", "--set", f"annotators_per_item={K}",
        "--set", "catch_rate=0",
        cwd=tmp_path,
    )  # fmt: skip

    proc, base = start_server(db, STUDY, "thirty-workers-secret")
    try:
        results = asyncio.run(waves(base))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)

    # Every worker reached the final page with the code of how they left, and its redirect.
    pids = [prolific_query(n, STUDY_ID)["PROLIFIC_PID"] for n in range(1, WORKERS + 1)]
    assert len(results) == WORKERS and len(set(pids)) == WORKERS
    for r in results:
        outcome = "screened_out" if r["n"] in SCREENED else "completed"
        code = CODES[outcome]
        assert r["screen"] == "exit", (r["n"], r["text"][-500:])
        assert f"https://app.prolific.com/submissions/complete?cc={code}" in r["text"]
        others = [c for o, c in CODES.items() if o != outcome]
        assert not any(c in r["text"] for c in others), r["n"]
        tests = r["phases"].count("test")
        assert r["phases"][:TRAINING] == ["training"] * TRAINING
        assert tests == (0 if r["n"] in SCREENED else BATCH), (r["n"], r["phases"])

    # Every test item of the study has exactly k labels, from k distinct workers.
    with sqlite3.connect(db) as conn:
        per_item = conn.execute(
            "SELECT si.item_id, count(l.id), count(DISTINCT l.annotator_id) FROM studyitem si "
            "JOIN study s ON s.id = si.study_id LEFT JOIN label l ON l.study_id = si.study_id "
            "AND l.item_id = si.item_id AND l.phase = 'test' WHERE s.name = ? AND si.phase = "
            "'test' GROUP BY si.item_id",
            (STUDY,),
        ).fetchall()
        outcomes = dict(
            conn.execute(
                "SELECT a.platform_id, count(*) FROM annotator a JOIN label l ON "
                "l.annotator_id = a.id AND l.phase = 'test' GROUP BY a.platform_id"
            ).fetchall()
        )
    assert len(per_item) == TEST_ITEMS
    assert {(n, d) for _, n, d in per_item} == {(K, K)}
    assert outcomes == {pid: BATCH for n, pid in enumerate(pids, start=1) if n not in SCREENED}

    # No platform id in what the researcher reads or publishes.
    report = cli(db, "report", STUDY, "--format", "json", cwd=tmp_path)
    status = cli(db, "status", STUDY, "--format", "json", cwd=tmp_path)
    json.loads(report)
    crowd = found(json.loads(status), "outcomes")
    left = {outcome: n for outcome, n in crowd["outcomes"].items() if n}
    assert left == {"completed": ADMITTED, "screened_out": len(SCREENED)}
    assert crowd["abandoned_sessions"] == 0
    cli(db, "export", STUDY, "--to", "out", "--format", "labels", cwd=tmp_path)
    exported = (tmp_path / "out" / f"{STUDY}-labels.csv").read_text()
    assert len(exported.splitlines()) == TEST_ITEMS * K + 1
    for text in (report, status, exported):
        assert not [pid for pid in pids if pid in text]

    # The bonus file pays each worker's stored time on task at the rate, less the base pay.
    cli(
        db, "pay", STUDY, "--hourly-rate", str(RATE), "--base-pay", str(BASE),
        "--format", "prolific", "--to", "bonus.csv", cwd=tmp_path,
    )  # fmt: skip
    lines = (tmp_path / "bonus.csv").read_text().split()
    paid = dict(line.split(",") for line in lines)
    assert len(paid) == len(lines)
    spans = visit_spans(Path(db))
    assert set(spans) == set(pids)
    assert paid == expected_bonus(spans)
    # The stored time covers the whole session: arrival before the first item was shown,
    # departure after the last answer.
    with sqlite3.connect(db) as conn:
        answered = conn.execute(
            "SELECT a.platform_id, min(l.shown_at), max(l.answered_at) FROM label l "
            "JOIN annotator a ON a.id = l.annotator_id GROUP BY a.platform_id"
        ).fetchall()
    assert len(answered) == WORKERS
    for platform_id, first, last in answered:
        (arrived, departed), *more = spans[platform_id]
        assert not more and arrived <= stamp(first) and stamp(last) <= departed
    assert set(paid) <= set(pids) and len(paid) >= ADMITTED  # admitted sessions outlast 5 ms
