"""`annotate prolific`'s parts on their own: the client's retries (and the one call it never
repeats), the token's absence, rejections that need a reason, and a store of annotate 0.4.2
(schema 11) upgraded to the schema with the Prolific ledger, its data kept."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from annotate.cli import app
from annotate.errors import UserError
from annotate.store import schema
from annotate.store.engine import make_engine
from tests.prolific_standin import running_standin

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
TOKEN = "unit-" + "ab12" * 8
OLD_STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.1.0.db"


def client(url: str, **kw):
    from annotate.platforms.prolific.client import Prolific

    return Prolific(TOKEN, url, sleep=lambda s: None, **kw)


def test_rate_limits_and_server_errors_are_retried_then_reported_in_one_line():
    from annotate.platforms.prolific.client import ProlificError

    with running_standin(TOKEN) as api, client(api.url, attempts=3) as c:
        api.state.faults += [("GET", "workspaces/", 429), ("GET", "workspaces/", 502)]
        assert c.workspaces()[0]["id"] == api.state.workspace
        assert len(api.state.of("GET", "workspaces/")) == 3
        api.state.faults += [("GET", "workspaces/", 503)] * 3
        with pytest.raises(ProlificError, match=r"GET workspaces/: 503 after 3 tries") as err:
            c.workspaces()
        assert TOKEN not in str(err.value)
        with pytest.raises(ProlificError, match="refused GET studies/nope/ \\(404\\)"):
            c.study("nope")


def test_a_payment_is_not_repeated_after_a_server_error_or_a_lost_answer():
    from annotate.platforms.prolific.client import ProlificUnsure

    calls = []

    def server_error(request):
        calls.append(request.url.path)
        return httpx.Response(502)

    with (
        client(
            "https://prolific.invalid/api/v1/", transport=httpx.MockTransport(server_error)
        ) as c,
        pytest.raises(ProlificUnsure, match="may have been acted on"),
    ):
        c.pay_bonuses("b1")
    assert calls == ["/api/v1/bulk-bonus-payments/b1/pay/"]

    def lost(request):
        calls.append(request.url.path)
        raise httpx.ReadTimeout("no answer", request=request)

    calls.clear()
    with client("https://prolific.invalid/api/v1/", transport=httpx.MockTransport(lost)) as c:
        with pytest.raises(ProlificUnsure):
            c.pay_bonuses("b1")
        assert len(calls) == 1
        with pytest.raises(UserError, match="no answer"):
            c.study("s1")  # a read is retried, then reported
    assert len(calls) == 1 + 5


def test_without_a_token_every_command_says_where_it_is_read_from(workspace, monkeypatch):
    monkeypatch.delenv("ANNOTATE_PROLIFIC_TOKEN", raising=False)
    from annotate.platforms.prolific.client import token_from_settings

    with pytest.raises(UserError, match="set ANNOTATE_PROLIFIC_TOKEN"):
        token_from_settings()


def test_a_rejection_needs_a_reason_prolific_accepts():
    from annotate.platforms.prolific.sync import MIN_REASON, check_reason

    with pytest.raises(UserError, match=f"at least {MIN_REASON} characters"):
        check_reason("too fast")
    long = "The answers were given faster than the items can be read. " * 2
    assert check_reason(long) == " ".join(long.split())


def _rows(path: Path, columns: dict[str, list[str]] | None = None) -> dict[str, list]:
    """Every table's rows; with `columns`, only those tables and columns (a store read before
    a migration that added columns elsewhere)."""
    with sqlite3.connect(path) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        out = {}
        for n in names:
            if n in ("meta", "alembic_version"):
                continue
            cols = ", ".join(f'"{c}"' for c in columns[n]) if columns and n in columns else "*"
            out[n] = sorted(map(repr, conn.execute(f'SELECT {cols} FROM "{n}"').fetchall()))
        return out


def _columns(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: [r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')] for n in names}


def test_a_store_of_annotate_0_4_2_upgrades_with_its_data_kept(tmp_path: Path, monkeypatch):
    """annotate 0.4.2's schema is revision 0011: the 0.1.0 fixture store migrated as 0.4.2's
    `migrate` left it (its head was 0011), then today's `migrate` adds the Prolific tables and
    keeps every row."""
    path = tmp_path / "store.db"
    shutil.copy(OLD_STORE, path)
    engine = make_engine(f"sqlite:///{path}")
    with monkeypatch.context() as m:
        m.setattr(schema, "SCHEMA_HEAD", "0011")
        assert schema.migrate_store(engine).to_revision == "0011"
    engine.dispose()
    before = _rows(path)
    columns = _columns(path)
    assert "prolificrequest" not in before and before["study"]
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "migrate"])
    assert result.exit_code == 0, result.output
    after = _rows(path, columns)
    assert after.pop("prolificstudy") == [] and after.pop("prolificrequest") == []
    assert {n: rows for n, rows in after.items() if n in before} == before
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert (
            conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            == schema.SCHEMA_HEAD
        )
    engine.dispose()
    study = before["study"][0].split(",")[1].strip(" '")
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "prolific", "status", study])
    assert "is not a crowd study" in str(result.exception)  # the old study: no Prolific


def test_a_study_runs_through_the_stand_in_in_process(workspace, tmp_path: Path, monkeypatch):
    """The fast loop's run of the API path (workers by the engine's link entry, as the page
    does; tests/integration/test_prolific_api.py drives the real page): drafts, approvals,
    a code that is not annotate's listed, a return freed, a rejection only with a reason, the
    group, and a bonus paid once."""
    from annotate.platforms.prolific import ledger
    from annotate.protocol import crowd
    from annotate.protocol.session import AnnotatorSession
    from tests.crowd_helpers import crowd_study, gold, pid
    from tests.unit.test_crowd_cli import Clock

    engine = workspace.engine
    crowd_study(
        engine, tmp_path, train=2, test=4, gate_rule="threshold", gate_threshold=0.5,
        crowd_settings={"study_ids": []},
    )  # fmt: skip
    db = str(engine.url)
    outputs: list[str] = []

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(app, ["--db", db, *args])
        outputs.append(result.output)
        if isinstance(result.exception, UserError):
            assert code == 1, result.exception
            return str(result.exception)
        assert result.exit_code == code, (args, result.output, result.exception)
        return result.output

    clock = Clock()

    def arrive(api, study_id: str, n: int) -> tuple[str, AnnotatorSession]:
        session_id = api.start(study_id, pid(n))
        ctx = crowd.load_study(engine, "pilot")
        query = {"PROLIFIC_PID": pid(n), "STUDY_ID": study_id, "SESSION_ID": session_id}
        arrival = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, query), clock=clock)
        session = AnnotatorSession.open(engine, "pilot", arrival.annotator, clock=clock)
        session.attach_window(arrival.visit_id)
        return session_id, session

    def finish(api, session_id: str, session: AnnotatorSession, code: str | None = None) -> str:
        while (item := session.next_item()) is not None:
            session.submit(item, gold(engine, item) if item.phase == "training" else "entailment")
        leave = crowd.exit_for(engine, "pilot", session.annotator.name, clock=clock)
        api.complete(session_id, code or leave.code)
        return leave.outcome

    with running_standin(TOKEN) as api:
        monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", TOKEN)
        monkeypatch.setenv("ANNOTATE_PROLIFIC_API", api.url)
        run("prolific", "create", "pilot", "--url", "https://annotate.example.org/",
            "--hourly-rate", "12")  # fmt: skip
        config = crowd.require_config(crowd.load_study(engine, "pilot"))
        study_a, study_b = config.training_study_id, config.test_study_id
        run("prolific", "publish", "pilot", "--part", "training")
        subs = {}
        for n in (1, 2, 3):
            subs[n], session = arrive(api, study_a, n)
            code = "WRONG123" if n == 3 else None
            assert finish(api, subs[n], session, code) == "training_done"
        subs[4], session = arrive(api, study_a, 4)
        # The link opened again (a second tab): the newer window replaces the first, which
        # was counted as an `open` visit for ever.
        query = {"PROLIFIC_PID": pid(4), "STUDY_ID": study_a, "SESSION_ID": subs[4]}
        link = crowd.parse_link(crowd.load_study(engine, "pilot"), query)
        session.attach_window(crowd.enter_by_link(engine, "pilot", link, clock=clock).visit_id)
        session.submit(session.next_item(), "entailment")
        api.state.leave(subs[4], "RETURNED")
        reason = "The code entered on Prolific is not the one the study gave: " * 2
        # A --reject that names nobody awaiting review is refused before anything is done:
        # approving first would approve the worker the mistyped name meant.
        posted = len(api.state.of("POST", "submissions/"))
        said = run("prolific", "sync", "pilot", "--reject", "w99", "--reason", reason, code=1)
        assert "w99: no submission awaiting review" in said and "nothing was" in said
        # A --reason without --reject (the --reject forgotten) was silently ignored, and the
        # sync approved everything else: refused before anything is done.
        said = run("prolific", "sync", "pilot", "--reason", reason, code=1)
        assert "--reason is the reason of a rejection" in said and "--reject" in said
        assert len(api.state.of("POST", "submissions/")) == posted
        assert len(api.state.of("POST", "submissions/")) == posted
        shown = run("prolific", "sync", "pilot", "--format", "json")
        found = {f["submission"]: f for f in __import__("json").loads(shown)}
        assert [found[subs[n]]["action"] for n in (1, 2, 3, 4)] == [
            "approved", "approved", "listed", "freed",
        ]  # fmt: skip
        assert "not the training_done code" in found[subs[3]]["reason"]
        w3 = found[subs[3]]["worker"]
        assert "at least 100 characters" in run(
            "prolific", "sync", "pilot", "--reject", w3, "--reason", "bad code", code=1
        )
        assert not api.state.of("POST", f"submissions/{subs[3]}")
        run("prolific", "sync", "pilot", "--reject", w3.upper(), "--reason", reason)
        (rejected,) = api.state.of("POST", f"submissions/{subs[3]}")
        assert rejected.body["action"] == "REJECT" and rejected.body["message"] == reason.strip()
        (entry,) = ledger.entries(engine, crowd.load_study(engine, "pilot"), "reject")
        assert entry.detail["reason"] == reason.strip() and entry.state == ledger.DONE
        # A --reject of a worker whose submission is approved (or returned) said "no
        # submission awaiting review by that name or id", as if there were no such worker.
        posted = len(api.state.of("POST", "submissions/"))
        w1 = found[subs[1]]["worker"]
        said = run("prolific", "sync", "pilot", "--reject", w1, "--reason", reason, code=1)
        assert f"--reject {w1}: {w1}'s submission is already approved, not awaiting review" in (
            " ".join(said.split())
        )
        said = run("prolific", "sync", "pilot", "--reject", subs[4], "--reason", reason, code=1)
        assert (
            f"{subs[4]}: that submission is already returned by the participant, not awaiting"
            in " ".join(said.split())
        )
        assert len(api.state.of("POST", "submissions/")) == posted

        # Study B published before `group` filled its participant group: nobody could take it.
        said = run("prolific", "publish", "pilot", "--part", "test", code=1)
        assert said == (
            "study B of pilot was not published: its participant group is empty, so no worker "
            "could take it; run `annotate prolific group pilot` first (a group you filled on "
            "Prolific's site is not seen here: publish study B there)"
        )
        assert not api.state.of("POST", f"studies/{study_b}/transition/")
        said = " ".join(run("prolific", "group", "pilot").split())
        (group,) = api.state.groups.values()
        admitted = crowd.admitted_ids(engine, crowd.load_study(engine, "pilot"), "prolific")
        assert sorted(group["members"]) == admitted
        n = len(admitted)
        assert (
            f"{n} admitted workers in participant group" in said and f"this run added {n}" in said
        )
        # A second run said the same, as if it had added them all again: it adds nobody.
        said = " ".join(run("prolific", "group", "pilot").split())
        assert f"{n} admitted workers in participant group" in said, said
        assert "this run added none (every admitted worker was in it already)" in said, said
        run("prolific", "publish", "pilot", "--part", "test")
        b_sub, session = arrive(api, study_b, 1)
        assert finish(api, b_sub, session) == "completed"
        run("prolific", "sync", "pilot")
        assert api.state.submissions[b_sub]["status"] == "APPROVED"
        said = run("prolific", "sync", "pilot", "--reject", w1, "--reason", reason, code=1)
        assert f"{w1}'s submissions are already approved, not awaiting review" in (
            " ".join(said.split())
        )

        # An infinite rate (`inf` parses as a float) was sent to Prolific as a bonus set-up.
        said = run("prolific", "pay", "pilot", "--hourly-rate", "inf", "--yes", code=1)
        assert "--hourly-rate must be a number more than 0, not inf" in said
        assert not api.state.of("POST", "submissions/bonus-payments/")
        # A payment Prolific refuses paid nobody: it is not counted, and the next run pays.
        api.state.faults.append(("POST", "bulk-bonus-payments/", 400))
        said = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--yes", code=1)
        assert "refused POST bulk-bonus-payments/" in said and not api.state.paid
        (refused,) = ledger.entries(engine, crowd.load_study(engine, "pilot"), "bonus_pay")
        assert refused.state == ledger.FAILED
        # A payment whose answer was lost (a 502) may have been made: counted as paid, never
        # asked again, until the researcher says they checked on Prolific it was not.
        api.state.faults.append(("POST", "bulk-bonus-payments/", 502))
        said = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--yes", code=1)
        assert "may have been acted on" in said and not api.state.paid
        (lost,) = ledger.entries(engine, crowd.load_study(engine, "pilot"), "bonus_pay")
        assert lost.state == ledger.PENDING
        shown = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--yes")
        assert f"--not-paid {lost.target}" in shown and "no bonus left" in shown
        assert not api.state.paid
        said = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--not-paid", "b0", code=1)
        assert f"b0 is not a payment whose answer was lost (those are: {lost.target})" in said
        shown = run(
            "prolific", "pay", "pilot", "--hourly-rate", "60", "--yes", "--not-paid", lost.target
        )
        assert len(api.state.paid) == 1 and "paid" in shown and "lost" not in shown
        assert len(api.state.of("POST", "submissions/bonus-payments/")) == 1  # set up once
        again = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--yes")
        assert "no bonus left to pay" in again and len(api.state.paid) == 1
        # The datasheet's pay of record: what Prolific was asked to pay, per worker.
        with sqlite3.connect(engine.url.database) as conn:
            recorded = dict(
                conn.execute(
                    "SELECT a.platform_id, p.amount FROM payment p "
                    "JOIN annotator a ON a.id = p.annotator_id WHERE p.amount > 0"
                ).fetchall()
            )
        assert recorded == {p: amount for p, amount in api.state.paid[0]["lines"]}
        before = len(api.state.requests)
        shown = run("prolific", "pay", "pilot", "--hourly-rate", "60", "--yes")
        # (it reads the studies' submissions, for the rewards Prolific paid; it asks nothing)
        assert "already paid" in shown
        assert {r.method for r in api.state.requests[before:]} == {"GET"}
        assert all(r.authorized for r in api.state.requests)
        # `annotate status` shows Prolific's counts as the last sync read them, with no call.
        before = len(api.state.requests)
        shown = run("status", "pilot", "--format", "json")
        (a, b) = __import__("json").loads(shown)["prolific"]
        assert a["role"] == "training" and a["prolific"]["APPROVED"] == 2
        assert a["prolific"]["RETURNED"] == 1 and a["prolific"]["REJECTED"] == 1
        assert a["annotate"]["training_done"] == 3 and b["prolific"]["APPROVED"] == 1
        # The returned worker's visit, ended by sync, is no longer counted as open.
        assert a["annotate"]["left"] == 1 and "open" not in a["annotate"]
        assert "Prolific study" in run("status", "pilot")
        assert len(api.state.requests) == before
        # The file-based `pay` lists those bonuses again, with no word that they were paid.
        file = run("pay", "pilot", "--hourly-rate", "60", "--format", "prolific",
                   "--to", str(tmp_path / "bonus.csv"))  # fmt: skip
        assert "paid bonuses through Prolific's API already" in " ".join(file.split())
    assert not [o for o in outputs if TOKEN in o]
    store = Path(engine.url.database or "")
    if store.exists():
        assert TOKEN.encode() not in store.read_bytes()


def test_create_refuses_a_bad_address_and_a_study_without_prolific_settings(
    workspace, tmp_path: Path, monkeypatch
):
    from tests.crowd_helpers import crowd_study

    crowd_study(workspace.engine, tmp_path, crowd_settings={"platform": "link", "study_ids": []})
    monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", TOKEN)
    db = str(workspace.engine.url)
    result = CliRunner().invoke(
        app, ["--db", db, "prolific", "create", "pilot", "--url", "x", "--hourly-rate", "9"]
    )
    assert "is a study by plain link, not a Prolific one" in str(result.exception)
    from annotate.platforms.prolific import studies
    from annotate.protocol import crowd
    from annotate.protocol.crowd_config import CrowdConfig, with_codes
    from annotate.protocol.studies import load_study

    prolific = with_codes(CrowdConfig(platform="prolific"))
    crowd.set_config(workspace.engine, "pilot", prolific)
    with pytest.raises(UserError, match="give the page's address"):
        studies.create(workspace.engine, load_study(workspace.engine, "pilot"), None, "x", None, 9)


@contextmanager
def _create_against_the_stand_in(workspace, tmp_path: Path, monkeypatch, **study: Any):
    """A Prolific crowd study, the stand-in running, and `prolific create`'s arguments."""
    from tests.crowd_helpers import crowd_study

    crowd_study(workspace.engine, tmp_path, crowd_settings={"study_ids": []}, **study)
    monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", TOKEN)
    args = ["--db", str(workspace.engine.url), "prolific", "create", "pilot",
            "--url", "https://annotate.example.org/", "--hourly-rate", "12"]  # fmt: skip
    with running_standin(TOKEN) as api:
        monkeypatch.setenv("ANNOTATE_PROLIFIC_API", api.url)
        yield api, args


@contextmanager
def _training_published(workspace, tmp_path: Path, monkeypatch):
    """Study A made by `prolific create` and published on the stand-in: the stand-in, the
    `--db` arguments and study A's Prolific id."""
    from annotate.protocol import crowd

    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        assert CliRunner().invoke(app, args).exit_code == 0
        study_a = crowd.require_config(crowd.load_study(workspace.engine, "pilot"))
        db = args[:2]
        published = CliRunner().invoke(
            app, [*db, "prolific", "publish", "pilot", "--part", "training"]
        )
        assert published.exit_code == 0, published.output
        yield api, db, study_a.training_study_id


def _trained_to_the_code(engine, api, study_a: str, n: int, clock) -> dict[str, str]:
    """Worker `n` arrives by study A's link, answers every training item right, takes their
    code and submits it on the stand-in; their link's query."""
    from annotate.protocol import crowd
    from annotate.protocol.session import AnnotatorSession
    from tests.crowd_helpers import gold, pid

    session_id = api.start(study_a, pid(n))
    query = {"PROLIFIC_PID": pid(n), "STUDY_ID": study_a, "SESSION_ID": session_id}
    link = crowd.parse_link(crowd.load_study(engine, "pilot"), query)
    arrival = crowd.enter_by_link(engine, "pilot", link, clock=clock)
    session = AnnotatorSession.open(engine, "pilot", arrival.annotator, clock=clock)
    session.attach_window(arrival.visit_id)
    while (item := session.next_item()) is not None:
        session.submit(item, gold(engine, item))
    leave = crowd.exit_for(engine, "pilot", session.annotator.name, clock=clock)
    api.complete(session_id, leave.code)
    return query


def test_a_create_prolific_refused_runs_again_and_uses_what_it_made(
    workspace, tmp_path: Path, monkeypatch
):
    """A refused call made nothing: the next `create` goes on (no "delete the draft it left"
    for a draft that does not exist), with the group the first run made, not a second one."""
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        api.state.faults.append(("POST", "studies/", 400))
        refused = CliRunner().invoke(app, args)
        assert "refused POST studies/ (400)" in str(refused.exception)
        made = CliRunner().invoke(app, args)
        assert made.exit_code == 0, made.output
        assert len(api.state.groups) == 1 and len(api.state.of("POST", "participant-groups/")) == 1
        assert len(api.state.studies) == 2


def test_a_time_or_places_that_cannot_be_is_refused_before_any_draft(
    workspace, tmp_path: Path, monkeypatch
):
    """`--seconds-per-item 0` drafted the studies at the default 30 s; `nan` and `inf` were a
    traceback; `--test-places -3` drafted study A on Prolific before B was refused."""
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        for seconds in ("0", "nan", "inf"):
            said = CliRunner().invoke(app, [*args, "--seconds-per-item", seconds])
            assert "--seconds-per-item must be a number more than 0" in str(said.exception)
        said = CliRunner().invoke(app, [*args, "--test-places", "-3"])
        assert said.exit_code == 2 and "--test-places" in said.output
        assert not api.state.studies and not api.state.of("POST", "studies/")


BAD_ADDRESSES = ["api.prolific.com/api/v1/", "ftp://api.prolific.com/", "https://[::1", "http://"]
EXPECTED_ADDRESS = "expected the http:// or https:// address of Prolific's API, like https://api.prolific.com/api/v1/"


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_a_bad_api_address_names_the_variable_or_option_and_the_value(
    workspace, tmp_path: Path, monkeypatch, address: str
):
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        given = CliRunner().invoke(app, [*args, "--api-url", address])
        assert str(given.exception) == f"--api-url {address!r}: {EXPECTED_ADDRESS}"
        monkeypatch.setenv("ANNOTATE_PROLIFIC_API", address)
        variable = CliRunner().invoke(app, args)
        assert str(variable.exception) == f"ANNOTATE_PROLIFIC_API={address!r}: {EXPECTED_ADDRESS}"
        assert not api.state.studies and not api.state.groups
        # Only the commands that call Prolific read it: the others work as ever.
        store = tmp_path / "other.db"
        made = CliRunner().invoke(app, ["--db", str(store), "init"])
        assert made.exit_code == 0, made.output
        assert store.exists()


def test_an_address_that_does_not_answer_is_named():
    with client("http://127.0.0.1:1/api/v1/", attempts=1) as c, pytest.raises(UserError) as raised:
        c.study("s1")
    assert str(raised.value) == (
        "Prolific: GET studies/s1/: cannot connect to http://127.0.0.1:1/api/v1/ (ConnectError)"
    )


def test_an_answer_that_is_not_json_is_an_error_not_nothing():
    """Read as {}, a list of submissions would be none and the counts zeros, stored."""
    from annotate.platforms.prolific.client import ProlificError, ProlificUnsure

    def html(request):
        return httpx.Response(200, text="<html>oops")

    with client("https://prolific.invalid/api/v1/", transport=httpx.MockTransport(html)) as c:
        with pytest.raises(ProlificError, match="GET studies/s1/: answered 200 with a body"):
            c.study("s1")
        with pytest.raises(ProlificUnsure, match="may have been acted on"):
            c.create_group("w1", "g", "d")


def test_a_create_whose_answer_was_lost_is_not_repeated_until_checked(
    workspace, tmp_path: Path, monkeypatch
):
    """A draft made and its answer lost (a 5xx) is not made twice by a retry: annotate says
    to look on Prolific, and creates again once told it was checked."""
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        api.state.faults.append(("POST", "studies/", 502))
        lost = CliRunner().invoke(app, args)
        assert "may have been acted on" in str(lost.exception)
        assert len(api.state.of("POST", "studies/")) == 1  # not repeated
        stuck = CliRunner().invoke(app, args)
        assert "then run create again with --checked" in str(stuck.exception)
        made = CliRunner().invoke(app, [*args, "--checked"])
        assert made.exit_code == 0, made.output
        assert len(api.state.studies) == 2 and len(api.state.groups) == 1


def test_the_training_study_serves_no_test_item_under_a_gate_that_admits_at_once(
    workspace, tmp_path: Path, monkeypatch
):
    """`prolific create` drafts two studies under any gate rule. A threshold gate admits a
    trainee with their last training answer: on study A's link they leave with the
    training-done code (A's reward is for training), and their batch is B's. Served on A,
    the batch was paid at A's reward, and B then approved them as completed for no work."""
    from annotate.protocol import crowd
    from tests.crowd_helpers import arrive, gold, label_test

    engine = workspace.engine
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (_api, args):
        made = CliRunner().invoke(app, args)
        assert made.exit_code == 0, made.output
        config = crowd.require_config(crowd.load_study(engine, "pilot"))
        study_a, study_b = config.training_study_id, config.test_study_id
        for n in (1, 2):  # the next training item, or the first test item with the feedback
            session = arrive(engine, "pilot", n, study_a)
            feedback = None
            while (item := session.next_item()) is not None:
                assert item.phase == "training", "a test item on the training study's link"
                feedback = session.submit(item, gold(engine, item))
            assert feedback is not None and feedback.upcoming is None
            assert crowd.exit_for(engine, "pilot", session.annotator.name).outcome == (
                "training_done"
            )
        with sqlite3.connect(engine.url.database) as conn:
            assert conn.execute("SELECT count(*) FROM label WHERE phase = 'test'").fetchone() == (
                0,
            )
        session = arrive(engine, "pilot", 1, study_b)
        assert label_test(session) > 0
        assert crowd.exit_for(engine, "pilot", "w01").outcome == "completed"


def test_every_submission_is_read_once_however_many_the_study_has():
    """Prolific lists a study's submissions whole (api-reference/studies/get-study-
    submissions: no page parameters). Asked page by page with limit and offset, a study of
    100 submissions or more gave the whole list again at every offset: `sync` never ended."""
    from itertools import islice

    with running_standin(TOKEN) as api, client(api.url) as c:
        study = c.create_study(
            {"name": "s", "description": "d", "external_study_url": "https://x.example/",
             "completion_codes": [{"code": "C1", "code_type": "COMPLETED", "actions": []}],
             "estimated_completion_time": 1, "reward": 10, "total_available_places": 150}
        )  # fmt: skip
        api.state.studies[study["id"]]["status"] = "ACTIVE"
        made = {api.start(study["id"], f"{n:024x}") for n in range(130)}
        read = [s["id"] for s in islice(c.submissions(study["id"]), 1000)]
        assert sorted(read) == sorted(made)
    # A list shorter than Prolific's own count is refused, not acted on in part.

    def short(request):
        if request.url.path.endswith("/counts/"):
            return httpx.Response(200, json={"AWAITING REVIEW": 3, "TOTAL": 3})
        return httpx.Response(200, json={"results": [{"id": "a"}, {"id": "b"}]})

    with (
        client("https://prolific.invalid/api/v1/", transport=httpx.MockTransport(short)) as c,
        pytest.raises(UserError, match="listed 2 of the study's 3 submissions; nothing"),
    ):
        c.submissions("s1")


def test_the_address_the_drafts_send_workers_to_is_the_one_serve_accepts(
    workspace, tmp_path: Path, monkeypatch
):
    """`prolific create --url` put the page's address on Prolific's drafts only: `serve`
    (without --public-url) did not know it, so behind the https proxy every answer from a
    worker the drafts sent was refused by the origin check, and `study crowd` showed
    https://YOUR-SERVER/. An address the study cannot keep is refused before any call."""
    from annotate.protocol import crowd
    from annotate.web.page.serve import stored_public_url

    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        url = args.index("--url") + 1
        bad = CliRunner().invoke(app, [*args[:url], "https://annotate.example.org/?x=1",
                                       *args[url + 1 :]])  # fmt: skip
        assert "no ?query" in str(bad.exception)
        assert not api.state.requests
        made = CliRunner().invoke(app, args)
        assert made.exit_code == 0, made.output
        assert f"`annotate serve pilot` (reached at {args[url]}" in made.output
    engine = workspace.engine
    assert stored_public_url(engine, "pilot") == args[url] == "https://annotate.example.org/"
    config = crowd.require_config(crowd.load_study(engine, "pilot"))
    for study in api.state.studies.values():
        assert study["external_study_url"].startswith(config.public_url)
    # A new address afterwards changed serve's public address in silence, while the drafts
    # went on sending workers to the old one (whose answers serve would then refuse).
    moved = CliRunner().invoke(
        app,
        ["--db", str(engine.url), "study", "crowd", "pilot", "--url", "https://new.example.org/"],
    )
    assert moved.exit_code == 0, moved.output
    said = " ".join(moved.output.split())
    assert "keep the address they were drafted with, not https://new.example.org/" in said
    assert all(p in said for p in api.state.studies)
    again = CliRunner().invoke(
        app,
        ["--db", str(engine.url), "study", "crowd", "pilot", "--url", "https://new.example.org/"],
    )
    assert "drafted with" not in again.output  # the address did not change this time


def test_a_rejected_submission_earns_no_bonus(workspace, tmp_path: Path, monkeypatch):
    """`prolific pay` paid every worker's time on task, a worker whose submission the
    researcher had rejected (`sync --reject`) too: the rejection withheld Prolific's reward,
    and the bonus then paid the time anyway."""
    from tests.crowd_helpers import pid
    from tests.unit.test_crowd_cli import Clock

    engine, clock = workspace.engine, Clock()
    with _training_published(workspace, tmp_path, monkeypatch) as (api, db, study_a):
        for n in (1, 2):
            _trained_to_the_code(engine, api, study_a, n, clock)
        reason = "The answers came faster than the sentences can be read, for every item. " * 2
        synced = CliRunner().invoke(
            app, [*db, "prolific", "sync", "pilot", "--reject", "w02", "--reason", reason]
        )
        assert synced.exit_code == 0, synced.output
        paid = CliRunner().invoke(
            app, [*db, "prolific", "pay", "pilot", "--hourly-rate", "600", "--yes"]
        )
        assert paid.exit_code == 0, paid.output
        assert "no bonus for the time of a rejected submission: w02" in paid.output
        (payment,) = api.state.paid
        assert [p for p, _ in payment["lines"]] == [pid(1)]


def test_a_crowd_file_given_again_keeps_the_studies_prolific_create_made(
    workspace, tmp_path: Path, monkeypatch
):
    """The API recipe's crowd file has no study ids (`prolific create` stores them). Given
    again with `study crowd --config` (a typo fixed in the consent text), it replaced the
    stored settings, ids and all: the link then refused every worker Prolific sent."""
    from annotate.protocol import crowd

    engine = workspace.engine
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        assert CliRunner().invoke(app, args).exit_code == 0
    made = crowd.require_config(crowd.load_study(engine, "pilot"))
    (tmp_path / "crowd.toml").write_text('platform = "prolific"\nconsent = "Fixed wording."\n')
    again = CliRunner().invoke(
        app, [*args[:2], "study", "crowd", "pilot", "--config", str(tmp_path / "crowd.toml")]
    )
    assert again.exit_code == 0, again.output
    now = crowd.require_config(crowd.load_study(engine, "pilot"))
    assert now.consent == "Fixed wording."
    assert (now.training_study_id, now.test_study_id, now.public_url) == (
        made.training_study_id, made.test_study_id, made.public_url,
    )  # fmt: skip
    assert set(now.accepted) == set(api.state.studies)


def test_a_token_prolific_does_not_take_is_named_as_the_setting_to_mend(
    workspace, tmp_path: Path, monkeypatch
):
    """Prolific answers 401 to a wrong or revoked token: the error says which setting holds
    it (never the token itself), and nothing is drafted."""
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", "revoked-" + TOKEN)
        refused = CliRunner().invoke(app, args)
        said = str(refused.exception)
        assert "(401)" in said and "ANNOTATE_PROLIFIC_TOKEN is wrong or no longer valid" in said
        assert "revoked-" not in said and not api.state.studies


def test_study_b_is_not_published_before_the_gate_closes_and_its_group_is_filled(
    workspace, tmp_path: Path, monkeypatch
):
    """`prolific publish --part test` before `gate --close` and `prolific group` published
    study B with its participant group empty: a study nobody could take, its places open."""
    from annotate.platforms.prolific import ledger
    from annotate.protocol import crowd

    engine = workspace.engine
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch, gate_rule="median") as (
        api,
        args,
    ):
        assert CliRunner().invoke(app, args).exit_code == 0
        study_b = crowd.require_config(crowd.load_study(engine, "pilot")).test_study_id
        before = api.state.studies[study_b]["status"]
        db = args[:2]
        result = CliRunner().invoke(app, [*db, "prolific", "publish", "pilot", "--part", "test"])
        assert str(result.exception) == (
            "study B of pilot was not published: its participant group is empty, so no worker "
            "could take it; close the gate (`annotate gate pilot --close`), then run "
            "`annotate prolific group pilot` first (a group you filled on Prolific's site is not "
            "seen here: publish study B there)"
        )
        assert api.state.studies[study_b]["status"] == before
        assert not api.state.of("POST", f"studies/{study_b}/transition/")
        assert not ledger.entries(engine, crowd.load_study(engine, "pilot"), "publish")


def test_a_worker_who_opens_their_link_again_after_their_code_is_still_approved(
    workspace, tmp_path: Path, monkeypatch
):
    """A trainee who took the training_done code, then opened their link again (the
    browser's back button, a bookmark) and closed it at the guidelines: `sync` judged the
    submission by that last visit, listed it as "the worker left before the end" and did not
    approve the work they had done."""
    from annotate.protocol import crowd
    from tests.unit.test_crowd_cli import Clock

    engine, clock = workspace.engine, Clock()
    with _training_published(workspace, tmp_path, monkeypatch) as (api, db, study_a):
        query = _trained_to_the_code(engine, api, study_a, 1, clock)
        link = crowd.parse_link(crowd.load_study(engine, "pilot"), query)
        crowd.enter_by_link(engine, "pilot", link, clock=clock)  # again, closed before the end
        synced = CliRunner().invoke(app, [*db, "prolific", "sync", "pilot", "--format", "json"])
        assert synced.exit_code == 0, synced.output
        (found,) = __import__("json").loads(synced.output)
        assert (found["action"], found["outcome"]) == ("approved", "training_done"), found
        assert api.state.submissions[query["SESSION_ID"]]["status"] == "APPROVED"
        # `prolific status` counts that worker once, by the code they took, as Prolific does
        # (it counted a second, open visit beside the code)
        shown = CliRunner().invoke(app, [*db, "prolific", "status", "pilot", "--format", "json"])
        training, _ = __import__("json").loads(shown.output)["prolific"]
        assert training["annotate"] == {"training_done": 1}, training


def test_publish_run_twice_says_the_study_is_published_and_asks_prolific_nothing(
    workspace, tmp_path: Path, monkeypatch
):
    """`prolific publish` run a second time sent Prolific a second PUBLISH and printed its
    refusal as a raw answer ("Prolific refused POST studies/…/transition/ (400): {'error': …}").
    It says the study was published already and what reopens it, and sends nothing."""
    with _create_against_the_stand_in(workspace, tmp_path, monkeypatch) as (api, args):
        assert CliRunner().invoke(app, args).exit_code == 0
        publish = [*args[:2], "prolific", "publish", "pilot", "--part", "training"]
        assert CliRunner().invoke(app, publish).exit_code == 0
        sent = len(api.state.of("POST", "studies/"))
        again = CliRunner().invoke(app, publish)
        said = " ".join(str(again.exception).split())
        assert again.exit_code == 1 and "training (A) of pilot" in said, said
        assert "was published already (last read: ACTIVE)" in said
        assert "`annotate prolific start pilot --part training` reopens it" in said
        assert len(api.state.of("POST", "studies/")) == sent


def test_the_commands_a_message_names_run_as_shown_for_a_study_name_with_a_space(
    workspace, tmp_path: Path, monkeypatch
):
    """A study named "rte pilot": `prolific create` said "Next: `annotate serve rte pilot`",
    which pasted into a shell serves a study named "rte" with a stray argument. Every command
    a crowd message names quotes the study's name where the shell needs it."""
    from tests.crowd_helpers import crowd_study

    crowd_study(workspace.engine, tmp_path, name="rte pilot", crowd_settings={"study_ids": []})
    monkeypatch.setenv("ANNOTATE_PROLIFIC_TOKEN", TOKEN)
    db = ["--db", str(workspace.engine.url)]
    with running_standin(TOKEN) as api:
        monkeypatch.setenv("ANNOTATE_PROLIFIC_API", api.url)
        made = CliRunner().invoke(app, [*db, "prolific", "create", "rte pilot", "--url",
                                        "https://annotate.example.org/", "--hourly-rate", "12"])  # fmt: skip
        assert made.exit_code == 0, made.output
        said = " ".join(made.output.split())
        assert "`annotate serve 'rte pilot'`" in said
        assert "`annotate prolific publish 'rte pilot' --part training`" in said
        early = CliRunner().invoke(app, [*db, "prolific", "publish", "rte pilot", "--part", "test"])
        refused = " ".join(str(early.exception).split())
        assert "`annotate prolific group 'rte pilot'`" in refused, refused
