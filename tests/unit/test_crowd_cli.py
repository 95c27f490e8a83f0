"""Crowd studies at the command line (issue 22): `study create --crowd`, `study crowd`, the
two-study median gate end to end with `gate --export prolific`, `annotate pay` checked against
the stored visit times, and no platform id in status, report or label export."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol import crowd
from annotate.protocol.session import AnnotatorSession
from annotate.store.models import Annotator, Visit
from annotate.workspace import open_workspace
from tests.crowd_helpers import STUDY_A, STUDY_B, gold, pid, prolific_query, wrong
from tests.engine_helpers import rte_rows, write_jsonl


class Clock:
    """Moves on a minute each time it is read: visits get times worth paying."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def setup_data(cli, tmp_path: Path) -> None:
    assert (
        cli("import", "superglue/rte", write_jsonl(tmp_path / "val.jsonl", rte_rows(6))).code == 0
    )
    test_file = write_jsonl(tmp_path / "test.jsonl", rte_rows(20, 1000))
    assert cli("import", "superglue/rte", test_file).code == 0


def create(cli, tmp_path: Path, name: str, toml: str, *extra: str):
    setup_data(cli, tmp_path)
    config = tmp_path / "crowd.toml"
    config.write_text(toml)
    return cli(
        "study", "create", name, "--task", "superglue/rte", "--protocol", "quick",
        "--train", "val", "--test", "test", "--crowd", "prolific", "--crowd-config", config,
        *extra,
    )  # fmt: skip


def worker(engine, study: str, n: int, study_id: str, clock: Clock) -> AnnotatorSession:
    ctx = crowd.load_study(engine, study)
    entry = crowd.parse_link(ctx, prolific_query(n, study_id))
    arrival = crowd.enter_by_link(engine, study, entry, clock=clock)
    session = AnnotatorSession.open(engine, study, arrival.annotator, clock=clock)
    session.attach_window(arrival.visit_id)
    return session


def train(engine, session: AnnotatorSession, right: bool) -> None:
    while (item := session.next_item()) is not None and item.phase == "training":
        truth = gold(engine, item)
        session.submit(item, truth if right else wrong(truth))


def test_study_create_with_crowd_prints_the_links_and_codes(cli, tmp_path: Path, db_url: str):
    result = create(cli, tmp_path, "rte-p", f'study_ids = ["{STUDY_A}"]\n')
    assert result.code == 0, result.stderr
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}" in result.stdout
    codes = cli("study", "crowd", "rte-p", "--format", "json").json()["codes"]
    assert set(codes) == set(crowd.OUTCOMES) and all(
        re.fullmatch(r"[A-Z0-9]{8}", c) for c in codes.values()
    )
    # Adding the test study later keeps every code the workers may have seen.
    again = cli("study", "crowd", "rte-p", "--platform-study", STUDY_B, "--format", "json")
    assert again.json()["codes"] == codes and again.json()["study_ids"] == [STUDY_A, STUDY_B]
    shown = cli("study", "crowd", "rte-p", "--url", "https://lab.example.org/rte-p")
    assert "https://lab.example.org/rte-p?PROLIFIC_PID=" in shown.stdout
    # An empty --url (an unset shell variable) was ignored: the old address shown, exit 0.
    empty = cli("study", "crowd", "rte-p", "--url", "")
    assert empty.code == 1 and "--url is empty" in empty.stderr
    # A mistake on the command line names the option given, not the stored key.
    ftp = cli("study", "crowd", "rte-p", "--url", "ftp://lab.example.org/")
    assert ftp.code == 1 and "--url must be an http(s) address with a host" in ftp.stderr
    assert "public_url" not in ftp.stderr and "(top level)" not in ftp.stderr
    half = cli("study", "crowd", "rte-p", "--training-study", "0123456789abcdef01234567")
    assert "--training-study and --test-study go together" in half.stderr
    # The platform by its name, with its article.
    base = ["study", "create", "rte-t", "--task", "superglue/rte", "--protocol", "quick"]
    turk = cli(*base, "--train", "val", "--test", "test", "--crowd", "mturk")
    assert turk.code == 0, turk.stderr
    assert "rte-t: an MTurk study; workers arrive by link" in turk.stdout


def test_a_prolific_study_with_no_study_accepted_yet_says_how_to_add_one(cli, tmp_path: Path):
    """The warning named only `--platform-study`, a step by hand: a researcher following the
    API recipe (its crowd file has no study ids) was sent to Prolific's site to make the
    studies `prolific create` drafts."""
    result = create(cli, tmp_path, "rte-none", 'platform = "prolific"\n')
    assert result.code == 0, result.stderr
    assert "no Prolific study accepted yet" in result.stderr and "--platform-study" in result.stderr
    warned = " ".join(result.stderr.split())
    assert "`annotate prolific create rte-none --url URL --hourly-rate RATE` drafts" in warned
    # Prolific takes no worker until a study is accepted: the link is not for "any study".
    assert "link for every phase (no study yet)" in result.stdout
    assert "any study" not in result.stdout


def test_bad_crowd_settings_are_refused_in_one_line(cli, tmp_path: Path):
    setup_data(cli, tmp_path)
    base = ["study", "create", "x", "--task", "superglue/rte", "--protocol", "quick"]
    bad_id = cli(*base, "--crowd", "prolific", "--platform-study", "study-1")
    assert bad_id.code == 1 and "not a Prolific study id (24 hex characters)" in bad_id.stderr
    bad_platform = cli(*base, "--set", "crowd=upwork")
    assert bad_platform.code == 1 and "--crowd takes prolific, mturk, link" in bad_platform.stderr
    assert cli("study", "list", "--format", "json").json() == []


def test_the_two_study_median_gate_end_to_end(cli, tmp_path: Path, db_url: str):
    toml = f'training_study_id = "{STUDY_A}"\ntest_study_id = "{STUDY_B}"\n'
    result = create(cli, tmp_path, "rte-m", toml, "--set", "gate_rule=median")
    assert result.code == 0, result.stderr
    assert "link for training" in result.stdout and "link for test" in result.stdout
    engine = open_workspace(db_url).engine
    clock = Clock()
    for n, right in ((1, True), (2, True), (3, False)):
        session = worker(engine, "rte-m", n, STUDY_A, clock)
        train(engine, session, right)
        leave = crowd.exit_for(engine, "rte-m", session.annotator.name, clock=clock)
        assert leave is not None and leave.outcome == "training_done"
    assert (
        cli(
            "gate", "rte-m", "--close", "--force", "--reason", "closed after the training study"
        ).code
        == 0
    )
    allow = tmp_path / "admitted.csv"
    exported = cli("gate", "rte-m", "--export", "prolific", allow)
    assert exported.code == 0 and "2 admitted prolific workers" in exported.stdout
    assert allow.read_text().split() == [pid(1), pid(2)]
    # The test link: the admitted go straight to test items, the others get a code.
    admitted = worker(engine, "rte-m", 2, STUDY_B, clock)
    item = admitted.next_item()
    assert item is not None and item.phase == "test"
    for n in (3, 9):
        other = worker(engine, "rte-m", n, STUDY_B, clock)
        leave = crowd.exit_for(engine, "rte-m", other.annotator.name, clock=clock)
        assert leave is not None and leave.outcome == "not_admitted"
    status = cli("status", "rte-m", "--format", "json").json()
    assert status["crowd"]["outcomes"]["training_done"] == 2  # w01, w02: their latest exits
    assert status["crowd"]["outcomes"]["not_admitted"] == 2
    # Per platform study, as Prolific counts its submissions: all three trained in study A,
    # though w03's latest exit is study B's.
    exits = {(e["platform_study"], e["outcome"]): e["workers"] for e in status["crowd"]["exits"]}
    assert exits == {(STUDY_A, "training_done"): 3, (STUDY_B, "not_admitted"): 2}
    shown = cli("status", "rte-m").stdout
    assert f"study {STUDY_A} (training link): training_done" in shown
    assert f"study {STUDY_B} (test link): not_admitted" in shown
    # Pay per platform study: each paid its own base reward, Prolific sets each one's bonus up.
    bonus = tmp_path / "bonus.csv"
    base = {STUDY_A: 0.5, STUDY_B: 1.25}
    rate = 600.0
    paid = cli(
        "pay", "rte-m", "--hourly-rate", rate, "--format", "prolific", "--to", bonus,
        "--base-pay", f"{STUDY_A}=0.5,{STUDY_B}=1.25",
    )  # fmt: skip
    assert paid.code == 0, paid.stderr
    assert not bonus.exists()
    seconds = independent_seconds(db_url, by_study=True)
    for platform_study in (STUDY_A, STUDY_B):
        written = tmp_path / f"bonus-{platform_study}.csv"
        lines = dict(line.split(",") for line in written.read_text().splitlines())
        expected = {
            who: f"{max(0.0, secs / 3600 * rate - base[platform_study]):.2f}"
            for (who, study), secs in seconds.items()
            if study == platform_study and secs / 3600 * rate > base[platform_study]
        }
        assert lines == expected and lines
        assert f"{written} (platform study {platform_study})" in paid.stdout
    unknown = cli(
        "pay", "rte-m", "--hourly-rate", "12", "--format", "prolific", "--to", bonus,
        "--base-pay", f"{STUDY_A}=0.5",
    )  # fmt: skip
    assert unknown.code == 1 and f"not the platform study {STUDY_B}" in unknown.stderr


def independent_seconds(db_url: str, *, by_study: bool = False) -> dict:
    """Time on task from the stored visits, summed here on its own: arrival to departure (or
    the last answer). The visits of one worker in these tests never overlap. `by_study`: per
    (platform id, platform study)."""
    engine = open_workspace(db_url).engine
    totals: dict = {}
    with Session(engine) as session:
        for visit, platform_id in session.exec(
            select(Visit, Annotator.platform_id).join(Annotator, Annotator.id == Visit.annotator_id)
        ):
            end = visit.departed_at or visit.last_seen_at
            key = (platform_id, visit.platform_study_id) if by_study else platform_id
            totals[key] = totals.get(key, 0.0) + (end - visit.arrived_at).total_seconds()
    return totals


def test_pay_is_time_on_task_times_the_rate_and_no_platform_id_leaks(
    cli, tmp_path: Path, db_url: str
):
    toml = f'study_ids = ["{STUDY_A}"]\n'
    create(cli, tmp_path, "rte-pay", toml, "--set", "max_test_items_per_annotator=4")
    engine = open_workspace(db_url).engine
    clock = Clock()
    for n, right in ((1, True), (2, True), (3, False)):
        session = worker(engine, "rte-pay", n, STUDY_A, clock)
        train(engine, session, right)
        while (item := session.next_item()) is not None:
            session.submit(item, "entailment")
        assert crowd.exit_for(engine, "rte-pay", session.annotator.name, clock=clock) is not None
    abandoned = worker(engine, "rte-pay", 4, STUDY_A, clock)  # leaves mid-training, no exit
    first = abandoned.next_item()
    abandoned.submit(first, gold(engine, first))
    bonus = tmp_path / "bonus.csv"
    result = cli("pay", "rte-pay", "--hourly-rate", "12", "--format", "prolific", "--to", bonus)
    assert result.code == 0, result.stderr
    paid = dict(line.split(",") for line in bonus.read_text().splitlines())
    seconds = independent_seconds(db_url)
    assert set(paid) == {pid(n) for n in (1, 2, 3, 4)}
    for platform_id, amount in paid.items():
        assert float(amount) == round(seconds[platform_id] / 3600 * 12, 2)
    total = sum(float(a) for a in paid.values())
    assert f"total {total:.2f} GBP" in result.stdout
    assert "median effective hourly pay: 12.00 GBP/h" in result.stdout
    capped = cli(
        "pay", "rte-pay", "--hourly-rate", "12", "--max-bonus", "1", "--format", "prolific",
        "--to", bonus,
    )  # fmt: skip
    assert "below the rate: w01" in capped.stdout
    sheet = cli("report", "rte-pay", "--format", "json").json()["datasheet"]["crowd"]
    assert sheet["abandoned_sessions"] == 1 and sheet["sessions"] == 4
    assert sheet["outcomes"]["completed"] == 2 and sheet["outcomes"]["screened_out"] == 1
    capped_rates = sorted(min(1.0, round(s / 3600 * 12, 2)) / (s / 3600) for s in seconds.values())
    assert sheet["median_effective_hourly_pay"] == pytest.approx(
        (capped_rates[1] + capped_rates[2]) / 2
    )
    # Platform ids: in the pay file and `annotator show`, nowhere else.
    assert pid(1) in cli("annotator", "show", "w01").stdout
    out = tmp_path / "out"
    assert cli("export", "rte-pay", "--to", out, "--format", "labels").code == 0
    seen = cli("status", "rte-pay").stdout + cli("status", "rte-pay", "--format", "json").stdout
    seen += "".join(p.read_text() for p in out.iterdir())
    seen += cli("annotator", "list", "--format", "json").stdout
    seen += cli("report", "rte-pay", "--format", "markdown").stdout
    for n in (1, 2, 3, 4):
        assert pid(n) not in seen
    assert "w01" in seen


def test_survey_export_by_pseudonym_with_formulas_defused(cli, tmp_path: Path, db_url: str):
    toml = f'study_ids = ["{STUDY_A}"]\n[[survey]]\nname = "remarks"\nprompt = "Anything?"\n'
    create(cli, tmp_path, "rte-s", toml, "--set", "max_test_items_per_annotator=1")
    engine = open_workspace(db_url).engine
    session = worker(engine, "rte-s", 1, STUDY_A, Clock())
    train(engine, session, True)
    session.submit(session.next_item(), "entailment")
    crowd.record_survey(engine, "rte-s", "w01", {"remarks": '=HYPERLINK("http://x")'})
    out = tmp_path / "survey.csv"
    assert cli("survey", "rte-s", "--to", out).code == 0
    assert out.read_text().splitlines()[1].startswith("w01,remarks,\"'=HYPERLINK(")
    exact = cli("survey", "rte-s", "--format", "json").json()
    assert exact[0]["answer"] == '=HYPERLINK("http://x")' and pid(1) not in out.read_text()


def test_survey_without_answers_says_why(cli, tmp_path: Path, db_url: str):
    """Not an empty table: no crowd, no question, or no answer yet."""
    create(cli, tmp_path, "rte-q", f'study_ids = ["{STUDY_A}"]\n')
    lab = ("study", "create", "rte-lab", "--task", "superglue/rte", "--protocol", "quick")
    assert cli(*lab, "--train", "val", "--test", "test").code == 0
    assert cli("survey", "rte-lab").stdout.strip() == (
        "rte-lab is not a crowd study, so it has no exit survey"
    )
    assert cli("survey", "rte-q").stdout.strip() == (
        "rte-q asks no exit-survey questions (a [[survey]] table in its crowd settings)"
    )
    toml = f'study_ids = ["{STUDY_B}"]\n[[survey]]\nname = "remarks"\nprompt = "Anything?"\n'
    create(cli, tmp_path, "rte-s", toml)
    assert cli("survey", "rte-s").stdout.strip() == (
        "Exit survey of rte-s: no answer yet (1 question asked as a worker finishes)"
    )
    assert cli("survey", "rte-s", "--format", "json").json() == []


def test_a_study_that_is_not_a_crowd_study_is_shown_the_command_that_makes_it_one(
    cli, tmp_path: Path
):
    setup_data(cli, tmp_path)
    lab = ("study", "create", "rte-lab", "--task", "superglue/rte", "--protocol", "quick")
    assert cli(*lab, "--train", "val", "--test", "test").code == 0
    refused = cli("prolific", "status", "rte-lab")
    assert refused.code == 1
    command = re.search(r"`annotate (study crowd [^`]+)`", refused.stderr)[1]
    assert command == "study crowd rte-lab --crowd prolific"
    assert cli(*command.split()).code == 0  # as the error says
    assert cli("study", "crowd", "rte-lab", "--format", "json").json()["platform"] == "prolific"


def test_study_create_help_names_the_crowd_values_it_takes():
    """`study create --help` said workers arrive "by a prolific, mturk or generic link", and
    `--crowd generic` is refused: the help names the values as the option takes them."""
    from typer.testing import CliRunner

    from annotate.cli import app
    from annotate.protocol.crowd_config import PLATFORMS

    shown = " ".join(CliRunner().invoke(app, ["study", "create", "--help"]).stdout.split())
    assert "generic" not in shown
    assert f"--crowd <str> A crowd study: {', '.join(PLATFORMS[:-1])} or {PLATFORMS[-1]}" in shown
