"""The crowd page's edges (issue 37): one public address from `study crowd --url` to `serve`,
codes unique per study, Quit in a crowd study, the exits counted per platform study, and one
definition of "abandoned" in status and the datasheet."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from annotate.protocol import crowd
from annotate.store.engine import write_connection
from annotate.store.models import Visit, utcnow
from tests.crowd_helpers import CODES, STUDY_A, STUDY_B, arrive, crowd_study, prolific_query, train
from tests.web.test_page import client, csrf, screen
from tests.web.test_page_crowd import answer_all

pytest.importorskip("starlette")
PUBLIC = "https://annotate.example.org/"


def served_app(cli, monkeypatch, *args: str):
    """`annotate serve ARGS` up to the point it would run: the page app it built, and what it
    said."""
    import annotate.web.page.serve as serve

    built = {}
    monkeypatch.setattr(serve, "run_page", lambda app, **_: built.setdefault("app", app))
    result = cli("serve", *args)
    assert result.code == 0, result.stderr
    return built["app"], " ".join(result.stderr.split())


def test_study_crowd_url_is_the_address_serve_takes_and_serve_says_when_they_differ(
    workspace, cli, tmp_path, monkeypatch
):
    crowd_study(workspace.engine, tmp_path)
    shown = cli("study", "crowd", "pilot", "--url", PUBLIC)
    assert shown.code == 0 and f"{PUBLIC}?PROLIFIC_PID=" in shown.stdout
    assert cli("study", "crowd", "pilot", "--format", "json").json()["public_url"] == PUBLIC
    # Changing something else keeps the address.
    cli("study", "crowd", "pilot", "--platform-study", STUDY_B)
    assert crowd.config_of(crowd.load_study(workspace.engine, "pilot")).public_url == PUBLIC

    app, said = served_app(cli, monkeypatch, "pilot")
    config = app.state.page.config
    assert "https://annotate.example.org" in config.origins and config.secure
    assert "warning" not in said
    app, said = served_app(cli, monkeypatch, "pilot", "--public-url", "https://other.example.org")
    assert "https://other.example.org" in app.state.page.config.origins
    assert f"is not the address the study's links were made with ({PUBLIC}" in said


def test_a_post_from_the_stored_public_address_is_taken(workspace, cli, tmp_path):
    from starlette.testclient import TestClient

    from annotate.web.page.serve import page_app

    crowd_study(workspace.engine, tmp_path, crowd_settings={"consent": "Agree?"})
    cli("study", "crowd", "pilot", "--url", PUBLIC)
    app = page_app(workspace.engine, "pilot", host="127.0.0.1", port=8000)
    origin = PUBLIC.rstrip("/")
    c = TestClient(app, base_url=origin, headers={"Origin": origin})
    consent = c.get("/", params=prolific_query(1))
    assert screen(c.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})) == (
        "guidelines"
    )


def test_two_outcomes_with_one_code_are_refused(workspace, cli, tmp_path):
    crowd_study(workspace.engine, tmp_path)
    config = tmp_path / "twice.toml"
    config.write_text('platform = "prolific"\n[codes]\ncompleted = "SAME1"\nstudy_full = "same1"\n')
    before = cli("study", "crowd", "pilot", "--format", "json").json()
    refused = cli("study", "crowd", "pilot", "--config", config)
    assert refused.code == 1
    assert "codes.study_full: 'same1' is also the code of completed" in refused.stderr
    assert cli("study", "crowd", "pilot", "--format", "json").json() == before


def test_generated_codes_never_repeat_a_given_one(workspace, tmp_path):
    from annotate.protocol.crowd_config import CrowdConfig, with_codes

    given = CrowdConfig.model_validate({"platform": "link", "codes": {"completed": "X"}})
    codes = with_codes(given, keep={"study_full": "X", "no_consent": "Y"}).codes
    assert codes["completed"] == "X" and codes["no_consent"] == "Y"
    assert len({c.upper() for c in codes.values()}) == len(codes)


def test_quit_in_a_crowd_study_leaves_with_the_code_or_the_way_back(workspace, tmp_path):
    survey = [{"name": "hard", "prompt": "How hard?", "kind": "choice", "choices": ["a", "b"]}]
    crowd_study(
        workspace.engine, tmp_path, train=2, test=2, gate_threshold=0.0,
        crowd_settings={"survey": survey},
    )  # fmt: skip
    # Items done, at the exit survey: Quit leaves with the completion code, survey or not.
    c = client(workspace.engine, "pilot")
    page = c.post("/start", data={"csrf": csrf(c.get("/", params=prolific_query(1)))})
    at_survey = answer_all(c, page)
    assert screen(at_survey) == "survey"
    left = c.post("/quit", data={"csrf": csrf(at_survey)})
    assert screen(left) == "exit" and CODES["completed"] in left.text
    assert f"cc={CODES['completed']}" in left.text
    # Mid-training no code is due: the way back is the platform's link, not a sign-in form.
    c = client(workspace.engine, "pilot")
    page = c.post("/start", data={"csrf": csrf(c.get("/", params=prolific_query(2)))})
    left = c.post("/quit", data={"csrf": csrf(page)})
    assert screen(left) == "left" and "Sign in again" not in left.text
    assert "open the study's link on your platform again" in left.text


def test_study_b_turns_away_anyone_not_admitted_at_arrival(workspace, tmp_path):
    two_studies = {"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B}
    crowd_study(workspace.engine, tmp_path, crowd_settings={**two_studies, "consent": "Agree?"})
    c = client(workspace.engine, "pilot")
    page = c.get("/", params=prolific_query(5, STUDY_B))  # never took study A
    assert screen(page) == "exit" and CODES["not_admitted"] in page.text
    assert "cc=" + CODES["not_admitted"] in page.text


def test_exits_per_platform_study_and_one_abandoned(workspace, cli, tmp_path):
    """A study_full exit is not "abandoned"; a worker who went quiet without a code is, in
    status and in the datasheet alike."""
    two_studies = {"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B}
    crowd_study(
        workspace.engine, tmp_path, train=2, test=1, gate_threshold=0.0,
        annotators_per_item=1, crowd_settings=two_studies,
    )  # fmt: skip
    for n in (1, 2):  # both train in study A
        session = arrive(workspace.engine, "pilot", n, STUDY_A)
        train(workspace.engine, session)
        assert crowd.exit_for(workspace.engine, "pilot", session.annotator.name).outcome == (
            "training_done"
        )
    first = arrive(workspace.engine, "pilot", 1, STUDY_B)  # takes the one test item
    while (item := first.next_item()) is not None:
        first.submit(item, "entailment")
    assert crowd.exit_for(workspace.engine, "pilot", "w01").outcome == "completed"
    late = arrive(workspace.engine, "pilot", 2, STUDY_B)  # nothing left for them
    assert crowd.exit_for(workspace.engine, "pilot", late.annotator.name).outcome == "study_full"
    quiet = arrive(workspace.engine, "pilot", 3, STUDY_A)  # trains a little, then goes quiet
    item = quiet.next_item()
    quiet.submit(item, "entailment")
    # Worker 4 trains a little and leaves by Quit (as `prolific sync` ends the visit of a
    # submission returned on Prolific): no code either. Their departure was counted as no
    # abandonment at all, so the sessions' exits did not add up.
    quitter = arrive(workspace.engine, "pilot", 4, STUDY_A)
    quitter.submit(quitter.next_item(), "entailment")
    quitter.release()
    with write_connection(workspace.engine) as conn:
        conn.execute(
            update(Visit.__table__)
            .where(Visit.annotator_id.in_([quiet.annotator_id, quitter.annotator_id]))
            .values(last_seen_at=utcnow() - timedelta(days=1))
        )
    status = cli("status", "pilot", "--format", "json").json()["crowd"]
    exits = {(e["platform_study"], e["outcome"]): e["workers"] for e in status["exits"]}
    assert exits == {
        (STUDY_A, "training_done"): 2,
        (STUDY_B, "completed"): 1,
        (STUDY_B, "study_full"): 1,
    }
    assert status["abandoned_workers"] == 2
    sheet = cli("report", "pilot", "--format", "json").json()["datasheet"]
    assert sheet["attrition"]["abandoned_names"] == ["w03", "w04"]
    assert sheet["crowd"]["abandoned_workers"] == 2
    assert sheet["crowd"]["abandoned_sessions"] == 2
    shown = {(e["platform_study"], e["outcome"], e["code"]): e["workers"]
             for e in sheet["crowd"]["exits"]}  # fmt: skip
    assert shown[(STUDY_B, "study_full", CODES["study_full"])] == 1


def test_serve_help_says_crowd_workers_enter_by_link(cli):
    shown = " ".join(cli("serve", "--help").stdout.split())
    assert "each page asks for the annotator's name and token" not in shown
    assert "workers enter by their platform link" in shown


def test_pay_for_mturk_writes_send_bonus_calls_and_says_so(workspace, cli, tmp_path):
    from tests.web.test_page_crowd import MTURK

    crowd_study(
        workspace.engine, tmp_path, train=1, test=1, gate_threshold=0.0,
        crowd_settings={"platform": "mturk", "study_ids": []},
    )  # fmt: skip
    c = client(workspace.engine, "pilot")
    page = c.post("/start", data={"csrf": csrf(c.get("/", params=MTURK))})
    assert screen(answer_all(c, page)) == "exit"
    bonus = tmp_path / "bonus.csv"
    # The other platform's format wrote an empty bonus file and exited 0, as if nobody were
    # owed anything: refused, naming the study's own format, and no file written.
    wrong = cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "prolific", "--to", bonus)
    assert wrong.code == 1 and "runs on mturk: its file is --format mturk" in wrong.stderr
    assert not bonus.exists()
    # Likewise the allow-list of the gate's admitted workers.
    allow = tmp_path / "admitted.csv"
    wrong = cli("gate", "pilot", "--export", "prolific", allow)
    assert wrong.code == 1 and "its file is --export mturk, not prolific" in wrong.stderr
    assert not allow.exists()
    assert cli("gate", "pilot", "--export", "mturk", allow).code == 0
    assert allow.read_text() == f"{MTURK['workerId']}\n"
    # `inf` and `nan` parse as floats: an infinite rate wrote bonuses of inf and stored them as
    # the pay of record; nan was a traceback, after the files were written.
    for rate in ("inf", "nan"):
        bad = cli("pay", "pilot", "--hourly-rate", rate, "--format", "mturk", "--to", bonus)
        assert bad.code == 1 and f"--hourly-rate must be a number more than 0, not {rate}" in (
            bad.stderr
        )
        assert "Traceback" not in bad.stderr and not bonus.exists()
    paid = cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "mturk", "--to", bonus)
    assert paid.code == 0, paid.stderr
    assert "each line is one SendBonus call" in " ".join(paid.stdout.split())
    header, line = bonus.read_text().splitlines()
    assert header == "WorkerId,AssignmentId,BonusAmount,Reason,UniqueRequestToken"
    assert line.startswith(f"{MTURK['workerId']},{MTURK['assignmentId']},")
    # MTurk pays in US dollars: the reason the worker reads said "GBP/h" unless told.
    assert " USD/h less the reward," in line and "GBP" not in paid.stdout
    # An earlier run in another currency (0.5.0 wrote GBP) is kept, with a warning: its request
    # tokens include the currency, and new ones would let MTurk pay the same bonuses again.
    in_pounds = tmp_path / "gbp.csv"
    cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "mturk", "--currency", "GBP",
        "--to", in_pounds)  # fmt: skip
    again = cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "mturk", "--to", bonus)
    assert bonus.read_text() == in_pounds.read_text()  # the same tokens
    assert "earlier `annotate pay` wrote GBP" in " ".join(again.stderr.split())


def test_pay_for_a_study_by_plain_link_writes_ids_and_amounts(workspace, cli, tmp_path):
    """A study by plain link (`--crowd link`, the researcher's own pool): `pay --format link`
    writes `id,amount` a line, the id each worker's link carried, for the lab's own payment
    system; before, no format took such a study (prolific's wrote an empty file)."""
    crowd_study(
        workspace.engine, tmp_path, train=1, test=1, gate_threshold=0.0,
        crowd_settings={"platform": "link", "study_ids": []},
    )  # fmt: skip
    for worker in ("p-017", "@cmd"):  # the second as a spreadsheet would run it
        c = client(workspace.engine, "pilot")
        page = c.post("/start", data={"csrf": csrf(c.get("/", params={"id": worker}))})
        assert screen(answer_all(c, page)) == "exit"
    pay = tmp_path / "pay.csv"
    wrong = cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "prolific", "--to", pay)
    assert wrong.code == 1 and "its file is --format link, not prolific" in wrong.stderr
    paid = cli("pay", "pilot", "--hourly-rate", "1e9", "--format", "link", "--to", pay)
    assert paid.code == 0, paid.stderr
    assert "2 workers" in paid.stdout
    header, *lines = pay.read_text().splitlines()
    assert header == "id,amount"
    ids = sorted(line.split(",")[0] for line in lines)
    assert ids == ["'@cmd", "p-017"]  # the formula defused, as in every CSV annotate writes
    assert all(float(line.split(",")[1]) > 0 for line in lines)
