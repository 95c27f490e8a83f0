"""Annotator tokens: shown once, stored as a salted scrypt hash, asked for by `annotate label`,
wrong ones refused and counted, never printed by researcher commands."""

from __future__ import annotations

import pytest
from sqlmodel import Session, select

from annotate.protocol.tokens import (
    TokenRefused,
    add_annotator_with_token,
    authenticate,
    hash_token,
    needs_token,
    verify_token,
)
from annotate.store.models import Annotator
from annotate.workspace import open_workspace
from tests import fixtures as fx
from tests.tui.support import QUICK_TEST, build_study, without_labels


def stored(engine, name: str) -> Annotator:
    with Session(engine) as s:
        return s.exec(select(Annotator).where(Annotator.name == name)).one()


def test_hash_is_salted_scrypt_and_verifies_only_the_token():
    first, second = hash_token("open sesame"), hash_token("open sesame")
    assert first.startswith("scrypt$") and first != second  # a new salt each time
    assert "open sesame" not in first
    assert verify_token("open sesame", first) and verify_token("open sesame", second)
    assert not verify_token("open sesame!", first)
    assert not verify_token("", first)
    for broken in ("", "plain", "scrypt$1$2", "bcrypt$16384$8$1$00$00", first[:-2]):
        assert not verify_token("open sesame", broken)


def test_authenticate_refuses_and_counts_wrong_tokens(store_url: str):
    """On both backends: the refusal is committed even though the call fails."""
    ws = open_workspace(store_url, create=True)
    _, token = add_annotator_with_token(ws.engine, "ana")
    assert needs_token(ws.engine, "ana") and not needs_token(ws.engine, "nobody")
    for wrong in ("guess", None, ""):
        with pytest.raises(TokenRefused, match=r"^Unknown name or wrong token \(the refusal"):
            authenticate(ws.engine, "ana", wrong)
    authenticate(ws.engine, "ana", token)
    authenticate(ws.engine, "ana", f"  {token}\n")  # pasted with whitespace
    row = stored(ws.engine, "ana")
    assert row.failed_logins == 3 and row.token_hash and token not in row.token_hash
    ws.engine.dispose()


@pytest.fixture
def study(workspace, tmp_path) -> str:
    return build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=without_labels(fx.SG_RTE),
        overrides=QUICK_TEST,
        name="rte",
    )


def token_from(output: str) -> str:
    return output.strip().splitlines()[-1]


def test_annotator_add_with_token_prints_it_once_and_stores_only_a_hash(cli, workspace):
    result = cli("annotator", "add", "ana", "--token")
    assert result.code == 0 and "shown only now" in result.stdout
    token = token_from(result.stdout)
    assert len(token) >= 20
    row = stored(workspace.engine, "ana")
    assert row.token_hash.startswith("scrypt$") and verify_token(token, row.token_hash)
    assert token not in row.token_hash


class FakeApp:
    """Stands in for the Textual app: the token check happens before it is built."""

    built: list[str] = []
    return_code = 0  # a clean exit (annotate label exits with a crashed app's code)
    release_failed = None  # the item on screen was given back at Quit
    continued_elsewhere = False  # no newer window took this one over
    dropped_answer = None  # no answer kept for an unreachable store was discarded at Quit

    def __init__(self, name: str) -> None:
        FakeApp.built.append(name)
        self.session = self

    def run(self) -> None:
        pass

    def progress(self):
        from types import SimpleNamespace

        from annotate.protocol.session import Phase

        return SimpleNamespace(
            training_done=0, test_done=0, stream_done=0, phase=Phase.TRAINING, refused_in_test=False
        )

    def more_to_come(self, progress) -> bool:
        return True


@pytest.fixture
def fake_app(monkeypatch):
    import annotate.tui.app

    FakeApp.built = []
    monkeypatch.setattr(
        annotate.tui.app, "create_app", lambda engine, study, name, **kw: FakeApp(name)
    )
    monkeypatch.delenv("ANNOTATE_TOKEN", raising=False)
    return FakeApp


def test_label_asks_for_the_token_and_refuses_a_wrong_one(
    cli, workspace, study, fake_app, monkeypatch
):
    token = token_from(cli("annotator", "add", "ana", "--token").stdout)
    monkeypatch.setenv("ANNOTATE_TOKEN", "not it")
    refused = cli("label", study, "--as", "ana")
    # the page's words (tokens.SIGN_IN_REFUSED): not "wrong token for annotator 'ana'", which
    # told that the name exists
    assert refused.code == 1 and refused.stderr == (
        "error: Unknown name or wrong token (the refusal is recorded). Try again.\n"
    )
    assert fake_app.built == []  # no screen before the token is right
    monkeypatch.setenv("ANNOTATE_TOKEN", token)
    assert cli("label", study, "--as", "ana").code == 0
    assert fake_app.built == ["ana"]
    assert stored(workspace.engine, "ana").failed_logins == 1


def test_label_prompts_without_echo_when_no_env_var(
    cli, workspace, study, fake_app, db_url, monkeypatch
):
    from typer.testing import CliRunner

    from annotate.cli import app

    token = token_from(cli("annotator", "add", "ana", "--token").stdout)
    result = CliRunner().invoke(
        app, ["--db", db_url, "label", study, "--as", "ana"], input=token + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "Token for ana" in result.output and token not in result.output
    assert fake_app.built == ["ana"]


def test_label_without_a_terminal_or_token_is_a_clear_error(cli, workspace, study, fake_app):
    cli("annotator", "add", "ana", "--token")
    result = cli("label", study, "--as", "ana")  # CliRunner: empty stdin, no env var
    assert result.code == 1 and "needs a token" in result.stderr
    assert fake_app.built == []


def test_annotators_without_tokens_are_not_asked(cli, workspace, study, fake_app):
    cli("annotator", "add", "bea")
    assert cli("label", study, "--as", "bea").code == 0
    assert fake_app.built == ["bea"]


def test_new_token_replaces_the_old_one(cli, workspace):
    old = token_from(cli("annotator", "add", "ana", "--token").stdout)
    new = token_from(cli("annotator", "token", "ana").stdout)
    row = stored(workspace.engine, "ana")
    assert new != old and verify_token(new, row.token_hash)
    assert not verify_token(old, row.token_hash)
    assert cli("annotator", "token", "nobody").code == 1


def test_researcher_commands_never_print_tokens(cli, workspace, study, fake_app, monkeypatch):
    token = token_from(cli("annotator", "add", "ana", "--token").stdout)
    monkeypatch.setenv("ANNOTATE_TOKEN", "wrong")
    cli("label", study, "--as", "ana")
    token_hash = stored(workspace.engine, "ana").token_hash
    outputs = [
        cli("annotator", "list"),
        cli("annotator", "list", "--format", "json"),
        cli("status", study, "--format", "json"),
        cli("status", study),
        cli("study", "show", study, "--format", "json"),
        cli("gate", study, "--format", "json"),
        cli("check", "--format", "json"),
        cli("check"),
    ]
    for out in outputs:
        text = out.stdout + out.stderr
        assert token not in text and token_hash not in text and "scrypt$" not in text
    listed = cli("annotator", "list", "--format", "json").json()
    assert listed == [
        {
            "id": listed[0]["id"],
            "name": "ana",
            "looks_like": [],
            "token": True,
            "failed_logins": 1,
            "created_at": listed[0]["created_at"],
            "synthetic": False,
            "platform": None,
        }
    ]


def test_label_refuses_simulated_annotators_and_crowd_workers(cli, workspace, study, fake_app):
    """Nobody labels in the terminal as one of simulate's annotators (their answers would be
    stored as synthetic) or as a crowd worker (paid for what is stored under their name)."""
    from annotate.store.engine import write_session

    assert (
        cli("simulate", study, "--annotators", "1", "--accuracy", "0.8", "--prefix", "bot").code
        == 0
    )
    with write_session(workspace.engine) as session:
        session.add(Annotator(name="w0001", platform="prolific", platform_id="5f0c"))
    synthetic = cli("label", study, "--as", "bot1")
    assert synthetic.code == 1 and "'bot1' is one of `annotate simulate`'s" in synthetic.stderr
    crowd = cli("label", study, "--as", "w0001")
    assert crowd.code == 1 and "'w0001' is a crowd worker (prolific)" in crowd.stderr
    assert "5f0c" not in crowd.stderr  # the platform id appears only where payment needs it
    assert "--as YOUR_NAME --create" in crowd.stderr
    assert fake_app.built == []  # no screen for either
    cli("annotator", "add", "ana")
    assert cli("label", study, "--as", "ana").code == 0 and fake_app.built == ["ana"]
