"""What a command-line user notices: an example in every --help, shell completion, whole rows
when output is piped, JSON from the scripting commands, progress bars only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer.main
from typer.testing import CliRunner

from annotate.cli import app
from annotate.export.label_table import label_table
from annotate.report.build import REPORT_STEPS, study_report
from annotate.simulate import simulate
from tests.engine_helpers import rte_study

LONG_NAME = "annotator-with-a-rather-long-name-that-a-narrow-table-would-fold-" + "x" * 20


def _help_pages():
    root = typer.main.get_command(app)

    def walk(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    yield from walk(root, [])


@pytest.mark.parametrize(
    "path", [" ".join(p) for p, _ in _help_pages()], ids=lambda p: p or "annotate"
)
def test_every_help_ends_with_an_example_of_that_command(path: str):
    result = CliRunner().invoke(app, [*path.split(), "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout or "Examples:" in result.stdout, result.stdout
    examples = result.stdout.split("Example", 1)[1].splitlines()[1:]
    lines = [line.strip() for line in examples if line.strip().startswith("annotate")]
    assert lines, result.stdout
    # the example is of this command (global options such as --db may come first)
    assert (
        all(path in " ".join(w for w in line.split() if not w.startswith("-")) for line in lines)
        or not path
    )


GLOBAL_OPTIONS = {"--db", "--config", "--debug", "--width", "--version", "--help"}
NAMED_COMMAND = re.compile(r"`annotate ([^`]+)`")
"""A command the program names to its user (an error's way out, a hint, a docstring shown as
help), e.g. `annotate study crowd STUDY --crowd prolific`; one written over several string
literals is read across them."""


def _named_commands() -> list[tuple[str, str]]:
    package = Path(__file__).resolve().parents[2] / "annotate"
    found = []
    for path in sorted(package.rglob("*.py")):
        for match in NAMED_COMMAND.finditer(path.read_text(encoding="utf-8")):
            # the words, less what joins string literals and f-string fields
            words = re.sub(r'"\s*\n\s*f?"', "", match[1]).split()
            found.append((str(path.relative_to(package)), " ".join(words)))
    return found


def test_every_command_the_program_names_exists_with_its_options():
    """A message that sends the user to `annotate X --option` names a command and options
    that exist: one that named `study crowd --platform` (the option is --crowd) failed."""
    root = typer.main.get_command(app)
    context = click.Context(root)
    wrong = []
    named = _named_commands()
    for where, command in named:
        words, found = command.split(), root
        while words and hasattr(found, "list_commands"):
            sub = found.get_command(context, words[0])
            if sub is None:
                break
            found, words = sub, words[1:]
        if found is root:
            if words and not words[0].startswith("-"):
                wrong.append(f"{where}: no command {command!r}")
            continue
        if hasattr(found, "list_commands"):
            continue  # a group named with its placeholder (`curate COMMAND`)
        options = {o for p in found.params for o in (*p.opts, *p.secondary_opts)}
        for word in words:
            option = re.match(r"--[a-z][a-z-]*", word)
            if option and option[0] not in options | GLOBAL_OPTIONS:
                wrong.append(f"{where}: {command!r} has no option {option[0]}")
    assert len(named) > 100  # the scan reads the program's messages
    assert not wrong, "\n".join(wrong)


def test_commands_suggested_for_names_with_spaces_run_as_shown(cli, workspace, tmp_path: Path):
    """A study, annotator or set whose name has a space is quoted in the command a message
    suggests, so that pasting it runs it (`annotate simulate 'rte pilot' …`)."""
    import shlex

    rte_study(workspace.engine, tmp_path, name="rte pilot")

    def suggested(output: str) -> list[str]:
        return shlex.split(re.search(r"`annotate ([^`]+)`", output)[1])

    hint = cli("simulate", "rte pilot", "--annotators", "2", "--accuracy", "0.9").stdout
    more = suggested(hint)
    assert more[:2] == ["simulate", "rte pilot"], hint
    assert cli(*more).code == 0  # as the hint says: the study completes
    refused = cli("label", "rte pilot", "--as", "ana lee")
    add = suggested(refused.stderr)
    assert add == ["annotator", "add", "ana lee"], refused.stderr
    assert cli(*add).code == 0
    unknown = cli("curate", "list", "my set")
    assert suggested(unknown.stderr) == ["curate", "create", "my set"], unknown.stderr


def test_shell_completion_is_offered():
    result = CliRunner().invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def _run(args: list[str], env: dict[str, str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "annotate", *args], capture_output=True, text=True, env=env, **kwargs
    )


@pytest.fixture
def piped_study(tmp_path: Path, workspace, db_url: str):
    ctx = rte_study(workspace.engine, tmp_path, name="wide")
    simulate(workspace.engine, "wide", 5, 0.9, prefix=LONG_NAME)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["ANNOTATE_DB"] = db_url
    return ctx, env


def test_piped_status_does_not_fold_a_row(piped_study):
    _, env = piped_study
    done = _run(["status", "wide"], env)  # stdout is a pipe, as in `annotate status wide | cat`
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if LONG_NAME in line]
    assert len(rows) == 5, done.stdout  # each annotator's whole name on their one row
    widths = {len(line) for line in done.stdout.splitlines() if line.startswith(("┃", "│"))}
    assert len(widths) == 1 and widths.pop() > 100  # as wide as the content, not 80


def test_width_folds_to_the_width_asked_for(piped_study):
    _, env = piped_study
    done = _run(["--width", "60", "status", "wide"], env)
    assert done.returncode == 0, done.stderr
    assert not [line for line in done.stdout.splitlines() if LONG_NAME in line]
    assert max(len(line) for line in done.stdout.splitlines()) <= 60


def test_piped_output_has_no_progress_bar(piped_study):
    _, env = piped_study
    for args in (
        ["report", "wide", "--bootstrap", "50"],
        ["simulate", "wide", "--annotators", "1", "--accuracy", "0.8", "--prefix", "late"],
    ):
        done = _run(args, env)
        assert done.returncode == 0, done.stderr
        assert "ETA" not in done.stderr + done.stdout and "report:" not in done.stderr


def test_a_terminal_gets_a_progress_bar_with_an_eta(piped_study):
    """stderr on a pseudo-terminal, stdout a pipe: the bar goes to stderr, the data stays clean."""
    _, env = piped_study
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "annotate", "report", "wide", "--bootstrap", "200"],
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**env, "TERM": "xterm", "COLUMNS": "120"},
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    out = proc.stdout.read().decode()
    assert proc.wait() == 0
    os.close(master)
    text = seen.decode(errors="replace")
    assert "report: " in text and "ETA" in text and f"/{REPORT_STEPS}" in text
    assert "report:" not in out and "Human, majority of" in " ".join(out.split())


def test_the_engine_reports_progress_through_the_hook_it_is_given(tmp_path, workspace):
    rte_study(workspace.engine, tmp_path, name="p")
    calls: list[tuple[str, int, int]] = []
    simulate(workspace.engine, "p", 5, 0.9, progress=lambda *c: calls.append(c))
    jobs = {what.split(":")[0] for what, _, _ in calls}
    assert jobs == {"simulate"}
    assert calls[-1][1] == calls[-1][2]  # it ends at its total
    assert any(what == "simulate: test labels" for what, _, _ in calls)

    calls.clear()
    study_report(workspace.engine, "p", bootstrap=20, progress=lambda *c: calls.append(c))
    steps = [what for what, _, _ in calls]
    assert steps[0] == "report: loading the labels" and steps[-1] == "report: done"
    assert any("bootstrap" in s for s in steps) and any("Dawid" in s for s in steps)
    assert [done for _, done, _ in calls] == sorted(done for _, done, _ in calls)

    calls.clear()
    table = label_table(workspace.engine, "p", progress=lambda *c: calls.append(c))
    assert calls[-1] == ("export: labels", len(table.rows), len(table.rows))


def test_scripting_commands_speak_json(cli, tmp_path: Path):
    made = cli("init", "--format", "json")
    assert made.code == 0 and made.json()["schema"] >= 8
    added = cli("annotator", "add", "ana", "--token", "--format", "json").json()
    assert added["annotator"] == "ana" and len(added["token"]) >= 16
    plain = cli("annotator", "add", "ben", "--format", "json").json()
    assert plain == {"annotator": "ben", "token": None}
    renewed = cli("annotator", "token", "ana", "--format", "json").json()
    assert renewed["annotator"] == "ana" and renewed["token"] != added["token"]
    copy = cli("backup", str(tmp_path / "copy.db"), "--format", "json").json()
    assert copy["path"] == str(tmp_path / "copy.db") and copy["bytes"] > 0
    migrated = cli("migrate", "--format", "json").json()
    assert migrated["changed"] is False and migrated["from_schema"] == migrated["to_schema"]


def test_export_prints_json_of_the_files_it_wrote(cli, workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, name="e")
    simulate(workspace.engine, "e", 5, 0.9)
    result = cli(
        "export",
        "e",
        "--to",
        tmp_path / "out",
        "--format",
        "superglue",
        "--zip",
        "--summary",
        "json",
    )
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)  # stdout is only the JSON; the notes went to stderr
    names = [Path(f["path"]).name for f in summary["files"]]
    assert names == ["RTE.jsonl", "superglue.manifest.json", "superglue.zip"]
    assert all(Path(f["path"]).stat().st_size == f["bytes"] for f in summary["files"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["init", "--db", "x.db"],
            "--db is a global option: put it before the command: annotate --db x.db init",
        ),
        (
            ["--width", "90", "study", "list", "--db=my store.db"],
            "--db is a global option: put it before the command: annotate --width 90 '--db=my store.db' study list",
        ),
        (
            ["study", "list", "--debug"],
            "--debug is a global option: put it before the command: annotate --debug study list",
        ),
        (
            ["init", "--config", "lab.toml"],
            "--config is a global option: put it before the command: annotate --config lab.toml init",
        ),
    ],
)
def test_a_global_option_after_the_command_says_where_it_goes(tmp_path, monkeypatch, args, said):
    """click said "No such option: --db" for `annotate init --db x.db`."""
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(app, args, prog_name="annotate")
    assert done.exit_code == 2  # a usage error, as before
    assert done.stderr.splitlines()[-1] == f"Error: {said}"
    assert not (tmp_path / "x.db").exists()  # not run with the option moved


def test_a_commands_own_option_of_a_global_name_and_an_unknown_option_are_as_before(tmp_path):
    done = CliRunner().invoke(app, ["init", "--bogus"], prog_name="annotate")
    assert done.exit_code == 2 and done.stderr.splitlines()[-1] == "Error: No such option: --bogus"
    crowd = CliRunner().invoke(
        app, ["--db", str(tmp_path / "none.db"), "study", "crowd", "s", "--config", "c.toml"]
    )
    assert "global option" not in crowd.output  # `study crowd` has a --config of its own
    assert "no annotate store" in str(crowd.exception)


@pytest.mark.parametrize(
    "args",
    [
        ("flags", "s", "--resolve", str(2**70), "--reason", "x"),
        ("import-labels", "x.csv", "--dataset", str(2**70)),
        ("curate", "show", "diag", str(2**70)),
        ("curate", "author", "diag", "--as", "lea", "--from", str(2**70)),
    ],
    ids=["flag", "dataset", "example", "author-from"],
)
def test_an_id_past_64_bits_is_refused_as_out_of_range(cli, args):
    """An id is a row's 64-bit number: a longer one is out of range, said in one line, where
    the database driver would overflow with a traceback."""
    result = cli(*args)
    assert result.code == 2
    assert "less than or equal to 9223372036854775807" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_suggested_command_says_what_to_add_when_the_store_was_given_by_db(
    workspace, db_url, tmp_path, monkeypatch
):
    """`annotate --db ../lab.db curate sets` suggested "`annotate curate create SET`": copied,
    it ran on ./annotate.db. Once per command a note says to add the --db given (a password
    masked); with ANNOTATE_DB, which a copied command meets too, nothing is added."""
    monkeypatch.delenv("ANNOTATE_DB", raising=False)
    runner = CliRunner()
    given = runner.invoke(app, ["--db", db_url, "curate", "sets"])
    assert "`annotate curate create SET`" in given.stdout
    note = " ".join(given.stderr.split())
    assert f"run it as `annotate --db {db_url} …` (or set ANNOTATE_DB={db_url})" in note
    assert note.count("note:") == 1
    from_env = runner.invoke(app, ["curate", "sets"], env={"ANNOTATE_DB": db_url})
    assert "`annotate curate create SET`" in from_env.stdout and "note:" not in from_env.stderr
    # The error path (`main`, as the console script runs it) says it too, after the error.
    done = subprocess.run(
        [sys.executable, "-m", "annotate", "--db", db_url, "curate", "show", "diag", "1"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "ANNOTATE_DB": ""},
    )  # fmt: skip
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: ") and "`annotate curate create diag`" in lines[0]
    assert lines[1].startswith("note: the command suggested above"), done.stderr


def test_the_store_note_masks_the_password_it_repeats(monkeypatch):
    from annotate.cli import context
    from annotate.cli.output import store_note

    monkeypatch.setattr(context, "db_typed", "postgresql+psycopg://ann:s3cret@db.lab/annot")
    monkeypatch.setattr(context, "db_noted", False)
    note = store_note("try `annotate datasets`") or ""
    assert "s3cret" not in note and "ann:***@db.lab" in note and "*** is the password" in note
