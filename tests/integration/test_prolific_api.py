"""Issue 37's acceptance run: a whole two-study Prolific baseline through Prolific's API, with
no file copied by hand, against a local stand-in of the API (tests/prolific_standin.py, a real
HTTP server on the loopback) and a real `annotate serve` process.

`annotate prolific create` drafts studies A (training) and B (test) and the participant group
B's filter allows; `publish` opens A; workers reserve a place on the stand-in, go through the
page by the link Prolific would send them to (PROLIFIC_PID, STUDY_ID, SESSION_ID), and come
back with the code the page gives them. Study A is paused, the gate closed, `prolific group`
fills the group, B is published: a rejected trainee cannot take B, the admitted ones do their
batch. `sync` approves what annotate counts, frees a returned worker's leases, lists the rest;
a sync killed twice (after its request key is stored, before and after the call) makes no
transition twice. `pay` pays each bonus once (a 429 on the way is retried); a second `pay`
makes no payment request. Every request the stand-in received is checked, and the token is
in no output, log or the store.

Ten trainees (not thirty): every worker is an HTTP client of the page and its server is a
second process, on two cores shared with other jobs; ten covers every path (two careless
trainees rejected by the median gate, one who returns, one who does not consent) at a
fraction of the time.
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
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.crowd_helpers import pid
from tests.engine_helpers import rte_rows, write_jsonl
from tests.prolific_standin import StandIn, running_standin
from tests.web import test_two_servers
from tests.web.test_page import csrf, screen, ticket
from tests.web.test_two_servers import free_port, start_server

pytestmark = pytest.mark.slow
httpx = pytest.importorskip("httpx")

ANNOTATE = (sys.executable, "-m", "annotate")
STUDY = "rte-prolific"
TOKEN = "tok-" + "7f3a9c" * 6  # what a leak would show, whole
TRAINING, BATCH, K = 4, 10, 4
TRAINEES = 10
CARELESS = {3, 7}  # every training answer wrong: below the median, rejected
RETURNS = 11  # reserves a place on A, answers one item, returns the submission
DECLINES = 12  # does not agree to the consent text
ADMITTED = TRAINEES - len(CARELESS)  # 8
TEST_ITEMS = ADMITTED * BATCH // K  # 20: 8 batches of 10 fill 20 items to k = 4
PAY_RATE = 3_600_000.0  # per hour: 1000 a second, so every session (> 5 ms) earns a bonus
GATE_NUMBER = re.compile(r"gate (\d+) was repaired")
CODE = re.compile(r"submissions/complete\?cc=([A-Za-z0-9_-]+)")


def truth(page: str) -> str:
    n = int(GATE_NUMBER.search(page)[1])
    return "entailment" if n % 2 == 0 else "not_entailment"


def opposite(value: str) -> str:
    return "not_entailment" if value == "entailment" else "entailment"


class Cli:
    """`annotate …` as a researcher types it, with the token in the environment; every output
    kept (to look for the token in it)."""

    def __init__(self, db: str, cwd: Path, api: StandIn):
        self.db, self.cwd, self.outputs = db, cwd, []
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ANNOTATE_")},
            "ANNOTATE_PROLIFIC_TOKEN": TOKEN,
            "ANNOTATE_PROLIFIC_API": api.url,
        }

    def __call__(self, *args: str, ok: bool = True) -> str:
        done = subprocess.run(
            [*ANNOTATE, "--db", self.db, *args],
            capture_output=True, text=True, cwd=self.cwd, timeout=180, env=self.env,
        )  # fmt: skip
        self.outputs += [done.stdout, done.stderr]
        if ok:
            assert done.returncode == 0, f"annotate {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout + done.stderr


async def take_part(base: str, api: StandIn, study_id: str, n: int, *, careless=False,
                    leave_after: int | None = None, agree: bool = True) -> dict:  # fmt: skip
    """Worker n: a place on the Prolific study, the page by its link, back with the code."""
    participant = pid(n)
    try:
        session = api.start(study_id, participant)
    except PermissionError as refused:
        return {"n": n, "refused": str(refused)}
    query = {"PROLIFIC_PID": participant, "STUDY_ID": study_id, "SESSION_ID": session}
    async with httpx.AsyncClient(base_url=base, headers={"Origin": base}, timeout=60) as c:
        page = await c.get("/", params=query, follow_redirects=True)
        answered = 0
        for _ in range(TRAINING * 2 + BATCH * 2 + 8):
            name = screen(page)
            if name == "consent":
                page = await c.post(
                    "/consent", data={"csrf": csrf(page), "agree": "yes" if agree else "no"}
                )
            elif name == "guidelines":
                page = await c.post("/start", data={"csrf": csrf(page)})
            elif name == "feedback":
                page = await c.get("/screen", params={"next": "1"})
            elif name == "item":
                if leave_after is not None and answered >= leave_after:
                    api.state.leave(session, "RETURNED")
                    return {"n": n, "session": session, "returned": True}
                phase = re.search(r'data-phase="(\w+)"', page.text)[1]
                right = truth(page.text)
                answer = opposite(right) if careless and phase == "training" else right
                page = await c.post(
                    "/answer", data={"csrf": csrf(page), "ticket": ticket(page), "answer": answer}
                )
                answered += 1
            else:
                break
    assert screen(page) == "exit", (n, page.text[-400:])
    code = CODE.search(page.text)[1]
    api.complete(session, code)  # following the page's "Return to Prolific"
    return {"n": n, "session": session, "code": code, "answered": answered}


def run_workers(base: str, api: StandIn, study_id: str, plans: dict[int, dict]) -> list[dict]:
    async def all_of():
        return await asyncio.gather(
            *(take_part(base, api, study_id, n, **kw) for n, kw in plans.items())
        )

    return asyncio.run(all_of())


def stamp(value: str | None) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def expected_bonuses(
    db: Path, rewards: dict[str, int], unrewarded: set[tuple[str, str]]
) -> dict[str, str]:
    """protocol/pay.py's time on task, recomputed from the visit table (the union of each
    worker's visits), at the rate, less the rewards of the Prolific studies they took, but
    for `unrewarded` places (participant, study: returned or timed out, no reward paid)."""
    spans: dict[str, list] = {}
    took: dict[str, set] = {}
    with sqlite3.connect(db) as conn:
        for platform_id, arrived, seen, departed, study_id in conn.execute(
            "SELECT a.platform_id, v.arrived_at, v.last_seen_at, v.departed_at, "
            "v.platform_study_id FROM visit v JOIN annotator a ON a.id = v.annotator_id"
        ):
            start, end = stamp(arrived), stamp(departed) or stamp(seen)
            spans.setdefault(platform_id, []).append((start, max(start, end)))
            took.setdefault(platform_id, set()).add(study_id)
    out = {}
    for platform_id, visits in spans.items():
        merged: list[list[datetime]] = []
        for a, b in sorted(visits):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        seconds = sum((b - a).total_seconds() for a, b in merged)
        base = sum(rewards[s] for s in took[platform_id] if (platform_id, s) not in unrewarded)
        base /= 100
        amount = round(max(0.0, seconds / 3600 * PAY_RATE - base), 2)
        if amount >= 0.01:
            out[platform_id] = f"{amount:.2f}"
    return out


def test_a_two_study_prolific_baseline_runs_through_the_api(tmp_path: Path, monkeypatch):
    db_path = tmp_path / "store.db"
    db = f"sqlite:///{db_path}"
    write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(TRAINING))
    write_jsonl(tmp_path / "RTE" / "test.jsonl", rte_rows(TEST_ITEMS, 1000))
    (tmp_path / "crowd.toml").write_text(
        'platform = "prolific"\nconsent = "We store your answers under a pseudonym."\n'
    )
    with running_standin(TOKEN) as api:
        cli = Cli(db, tmp_path, api)
        cli("import", "superglue/rte", "RTE")
        cli(
            "study", "create", STUDY, "--task", "superglue/rte", "--protocol", "superglue-2019",
            "--train", "val", "--test", "test", "--crowd", "prolific",
            "--crowd-config", "crowd.toml",
            "--set", f"max_test_items_per_annotator={BATCH}", "--set", f"training_items={TRAINING}",
            "--set", f"gate_min_items={TRAINING}", "--set", f"test_sample={TEST_ITEMS}",
            "--set", f"annotators_per_item={K}", "--set", "catch_rate=0",
        )  # fmt: skip
        # The page's address is on the drafts, and `serve` reads the studies it accepts when it
        # starts: the port first, the server after `prolific create`.
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server: list = []

        def serve() -> None:
            monkeypatch.setattr(test_two_servers, "free_port", lambda: port)
            server.append(start_server(db, STUDY, "prolific-api-secret")[0])

        try:
            _run(cli, api, base, db_path, monkeypatch, serve)
        finally:
            serve_log = b""
            if server:
                os.killpg(server[0].pid, signal.SIGTERM)
                _, serve_log = server[0].communicate(timeout=20)
        # Every request carried the token, and the token is nowhere annotate wrote.
        assert api.state.requests and all(r.authorized for r in api.state.requests)
        written = [*cli.outputs, serve_log.decode()]
        assert not [text for text in written if TOKEN in text]
        for path in tmp_path.rglob("*"):
            if path.is_file():
                assert TOKEN.encode() not in path.read_bytes(), path


def _run(cli: Cli, api: StandIn, base: str, db_path: Path, monkeypatch, serve) -> None:
    state = api.state
    # Rate limits on the way: retried with backoff, nothing made twice (a server error on a
    # call that makes something is not repeated: tests/unit/test_prolific.py).
    state.faults += [("GET", "workspaces/", 429), ("POST", "studies/", 429)]
    shown = cli("prolific", "create", STUDY, "--url", base, "--hourly-rate", "12",
                "--seconds-per-item", "20", "--training-places", "12")  # fmt: skip
    assert len(state.of("GET", "workspaces/")) == 2 and len(state.of("POST", "studies/")) == 3
    assert len(state.studies) == 2 and len(state.groups) == 1
    config = json.loads(cli("study", "crowd", STUDY, "--format", "json"))
    study_a, study_b = config["training_study_id"], config["test_study_id"]
    a, b = state.studies[study_a], state.studies[study_b]
    assert study_a in shown and study_b in shown
    group = next(iter(state.groups))
    # The drafts: the page's link with Prolific's placeholders, each outcome's code with its
    # action, time, reward and places from the plan, and B open to the group only.
    for study in (a, b):
        assert study["external_study_url"] == (
            f"{base}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
            "&SESSION_ID={{%SESSION_ID%}}"
        )
        assert study["prolific_id_option"] == "url_parameters"
        assert {c["actions"][0]["action"] for c in study["completion_codes"]} == {"MANUALLY_REVIEW"}
    codes = config["codes"]
    assert {c["code"] for c in a["completion_codes"]} == {
        codes[o] for o in ("training_done", "screened_out", "study_full", "no_consent")
    }
    assert {c["code"] for c in b["completion_codes"]} == {
        codes[o] for o in ("completed", "screened_out", "study_full", "no_consent", "not_admitted")
    }
    assert a["estimated_completion_time"] == -(-TRAINING * 20 // 60) + 2
    assert a["reward"] == -(-12 * a["estimated_completion_time"] * 100 // 60)
    assert a["total_available_places"] == 12
    assert b["total_available_places"] == -(-TEST_ITEMS * K // BATCH)
    assert a["filters"] == [] and b["filters"] == [
        {"filter_id": "participant_group_allowlist", "selected_values": [group]}
    ]

    serve()
    cli("prolific", "publish", STUDY, "--part", "training")
    assert a["status"] == "ACTIVE" and b["status"] == "UNPUBLISHED"
    plans = {n: {"careless": n in CARELESS} for n in range(1, TRAINEES + 1)}
    plans[RETURNS] = {"leave_after": 1}
    plans[DECLINES] = {"agree": False}
    trained = run_workers(base, api, study_a, plans)
    by_n = {r["n"]: r for r in trained}
    for n in range(1, TRAINEES + 1):
        assert by_n[n]["code"] == codes["training_done"], by_n[n]
    assert by_n[DECLINES]["code"] == codes["no_consent"] and by_n[RETURNS]["returned"]

    # The returned worker still holds a lease until sync frees it.
    returned_visit = "SELECT departed_at FROM visit WHERE platform_session_id = ?"
    with sqlite3.connect(db_path) as conn:
        assert conn.execute(returned_visit, (by_n[RETURNS]["session"],)).fetchone()[0] is None
    cli("prolific", "pause", STUDY, "--part", "training")  # before the gate closes
    assert a["status"] == "PAUSED"
    # Sync A: the trainees approved, the returned worker's visit ended and leases freed at
    # once, the one who did not consent listed (never rejected silently).
    shown = cli("prolific", "sync", STUDY, "--format", "json")
    first = {f["submission"]: f for f in json.loads(shown)}
    assert first[by_n[RETURNS]["session"]]["action"] == "freed"
    assert first[by_n[DECLINES]["session"]]["action"] == "listed"
    assert "return" in first[by_n[DECLINES]["session"]]["reason"]
    assert [f["action"] for f in first.values()].count("approved") == TRAINEES
    with sqlite3.connect(db_path) as conn:
        assert conn.execute(returned_visit, (by_n[RETURNS]["session"],)).fetchone()[0]
        leases = conn.execute(
            "SELECT count(*) FROM lease l JOIN annotator a ON a.id = l.annotator_id "
            "WHERE a.platform_id = ?", (pid(RETURNS),),
        ).fetchone()[0]  # fmt: skip
        assert leases == 0
    gone = first[by_n[RETURNS]["session"]]["worker"]
    cli("gate", STUDY, "--reject", gone, "--reason", "returned the submission on Prolific")
    cli("gate", STUDY, "--close")
    shown = cli("prolific", "group", STUDY)
    admitted = {pid(n) for n in range(1, TRAINEES + 1) if n not in CARELESS}
    assert set(state.groups[group]["members"]) == admitted and f"{ADMITTED} admitted" in shown

    cli("prolific", "publish", STUDY, "--part", "test")
    tested = run_workers(base, api, study_b, {n: {} for n in [*range(1, TRAINEES + 1)]})
    for r in tested:
        if r["n"] in CARELESS:
            assert "participant group" in r["refused"]  # Prolific keeps them out of B
        else:
            assert r["code"] == codes["completed"], r
    with sqlite3.connect(db_path) as conn:
        per_item = conn.execute(
            "SELECT count(*) FROM label WHERE phase = 'test' GROUP BY item_id"
        ).fetchall()
    # No item past k; every answer stored (all at once, a worker may find only items they
    # labelled before the batch is full: the thirty-worker test covers exact filling).
    assert max(n for (n,) in per_item) <= K
    assert sum(n for (n,) in per_item) == sum(r.get("answered", 0) for r in tested)

    # Sync, killed twice: after its request key is stored and the call made (the answer not
    # recorded), then after the key is stored and before the call. No transition is repeated.
    from annotate.platforms.prolific import client as client_module
    from annotate.platforms.prolific import ledger

    real_finish, real_transition = ledger.finish, client_module.Prolific.transition_submission

    def finish_then_die(engine, key, detail=None, **kw):
        if key.startswith("approve:"):
            raise KeyboardInterrupt("killed after the call")
        return real_finish(engine, key, detail, **kw)

    def die_before_call(self, submission, body):
        raise KeyboardInterrupt("killed before the call")

    from typer.testing import CliRunner

    from annotate.cli import app

    monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", TOKEN)
    monkeypatch.setenv("ANNOTATE_PROLIFIC_API", api.url)
    pending_sql = "SELECT target FROM prolificrequest WHERE state = 'pending'"
    left = []
    for patch in (
        (ledger, "finish", finish_then_die),
        (client_module.Prolific, "transition_submission", die_before_call),
    ):
        monkeypatch.setattr(*patch)
        killed = CliRunner().invoke(
            app, ["--db", f"sqlite:///{db_path}", "prolific", "sync", STUDY]
        )
        assert killed.exit_code == 130, killed.output  # as a Ctrl-C or a kill leaves it
        cli.outputs.append(killed.output)
        monkeypatch.setattr(ledger, "finish", real_finish)
        monkeypatch.setattr(client_module.Prolific, "transition_submission", real_transition)
        with sqlite3.connect(db_path) as conn:
            left.append([t for (t,) in conn.execute(pending_sql)])
    # The first kill left submission X approved on Prolific but not recorded: the second run
    # saw it approved and settled its key with no call, then died before approving Y.
    (x,), (y,) = left
    assert x != y and state.submissions[x]["status"] == "APPROVED"
    assert state.submissions[y]["status"] == "AWAITING REVIEW"

    shown = cli("prolific", "sync", STUDY, "--format", "json")
    found = {f["submission"]: f for f in json.loads(shown)}
    approvals = Counter(
        r.path for r in state.of("POST", "submissions/") if r.body == {"action": "APPROVE"}
    )
    assert approvals and set(approvals.values()) == {1}  # each submission approved once
    assert not [r for r in state.of("POST", "submissions/") if r.body.get("action") == "REJECT"]
    should_approve = {r["session"] for r in trained if r.get("code") == codes["training_done"]}
    should_approve |= {r["session"] for r in tested if r.get("code")}
    assert {p.split("/")[1] for p in approvals} == should_approve
    assert {
        s["id"] for s in state.submissions.values() if s["status"] == "APPROVED"
    } == should_approve
    assert found[y]["action"] == "approved" and found[x]["action"] == "done"
    assert [f["action"] for f in found.values()].count("approved") == ADMITTED - 1
    with sqlite3.connect(db_path) as conn:
        assert not conn.execute("SELECT 1 FROM prolificrequest WHERE state = 'pending'").fetchall()
    before = len(state.requests)
    again = cli("prolific", "sync", STUDY, "--format", "json")
    assert {f["action"] for f in json.loads(again)} <= {"done", "listed"}
    assert not [r for r in state.requests[before:] if r.method == "POST"]

    # Bonuses: set up per study (a 429 on the pay call is retried), paid once.
    shown = cli("prolific", "pay", STUDY, "--hourly-rate", str(PAY_RATE))
    assert "Nothing paid yet" in shown and not state.paid
    state.faults.append(("POST", "bulk-bonus-payments/", 429))
    cli("prolific", "pay", STUDY, "--hourly-rate", str(PAY_RATE), "--yes")
    setups = state.of("POST", "submissions/bonus-payments/")
    assert len(setups) == 1  # the set-up shown first is the one paid
    assert len(state.of("POST", "bulk-bonus-payments/")) == 2 and len(state.paid) == 1
    rewards = {study_a: a["reward"], study_b: b["reward"]}
    paid = {p: f"{amount:.2f}" for entry in state.paid for p, amount in entry["lines"]}
    returned = {
        (sub["participant_id"], sub["study_id"])
        for sub in state.submissions.values()
        if sub["status"] in ("RETURNED", "TIMED-OUT")
    }
    assert (pid(RETURNS), study_a) in returned
    assert paid == expected_bonuses(db_path, rewards, returned)
    # The worker who returned A was paid their minutes there, no reward (none paid) taken off.
    assert float(paid[pid(RETURNS)]) > 0
    assert "no reward taken off for a submission returned or timed out" in shown
    assert setups[0].body["study_id"] == study_a  # every worker took A
    # A second run pays nothing and says what was paid.
    before = len(state.requests)
    shown = cli("prolific", "pay", STUDY, "--hourly-rate", str(PAY_RATE), "--yes")
    assert "already paid" in shown and "no bonus left to pay" in shown
    # (it reads each study's submissions, for the rewards Prolific paid: nothing else)
    assert {r.method for r in state.requests[before:]} == {"GET"}

    shown = cli("prolific", "status", STUDY, "--format", "json")
    rows = {r["role"]: r for r in json.loads(shown)["prolific"]}
    assert rows["training"]["status"] == "PAUSED" and rows["test"]["status"] == "ACTIVE"
    assert rows["training"]["prolific"]["APPROVED"] == TRAINEES
    assert rows["training"]["prolific"]["RETURNED"] == 1
    assert rows["training"]["prolific"]["AWAITING REVIEW"] == 1
    assert rows["test"]["prolific"]["APPROVED"] == ADMITTED
    assert rows["training"]["annotate"]["training_done"] == TRAINEES
    assert rows["test"]["annotate"]["completed"] == ADMITTED
    cli("prolific", "status", STUDY)
    cli("prolific", "pause", STUDY, "--part", "test")
    cli("prolific", "start", STUDY, "--part", "test")
    assert b["status"] == "ACTIVE"
    cli("prolific", "stop", STUDY, "--part", "test")
    assert b["status"] == "AWAITING REVIEW"
    transitions = [
        r.body["action"] for r in state.of("POST", "studies/") if r.path.endswith("transition/")
    ]
    assert transitions == ["PUBLISH", "PAUSE", "PUBLISH", "PAUSE", "START", "STOP"]
