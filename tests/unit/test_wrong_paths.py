"""Slips a user makes with the paths a command writes to or reads from: a file where a folder
is wanted (`export --to`, `report --figures`), a folder where a file is (`backup`, `curate
export`), a study name too long for a file name, a task or protocol file an editor saved in
Latin-1, a path the system refuses. Each is one line naming the path and the reason, exit
status 1, nothing written; the console script itself runs where a traceback could escape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from annotate.simulate import simulate
from tests.engine_helpers import rte_study


@pytest.fixture
def study(workspace, tmp_path: Path) -> str:
    rte_study(workspace.engine, tmp_path, name="pilot")
    simulate(workspace.engine, "pilot", 5, 0.9)
    return "pilot"


def _annotate(db_url: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANNOTATE_DB": db_url}
    env.pop("ANNOTATE_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "annotate", *args], capture_output=True, text=True, env=env
    )


def test_a_file_where_a_folder_is_wanted_is_one_line(cli, study, tmp_path: Path):
    taken = tmp_path / "results.csv"
    taken.write_text("mine\n")
    for args in (
        ("export", study, "--format", "labels", "--to", taken),
        ("export", study, "--format", "soft", "--to", taken),
        ("report", study, "--figures", taken),
    ):
        result = cli(*args)
        option = "--figures" if "--figures" in args else "--to"
        assert result.code == 1, args
        assert f"{option} {taken} is a file: name a folder" in result.stderr, result.stderr
    assert taken.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_folder_where_a_file_is_wanted_names_a_file_to_use(cli, study, tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    result = cli("backup", folder, "--overwrite")
    assert result.code == 1 and f"{folder} is a folder: name the file to write" in result.stderr
    assert f"{folder / 'store.db'}" in result.stderr  # the store's own name, as an example
    write = tmp_path / "diagnostic.tsv"
    write.write_text(
        "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\t"
        "Premise\tHypothesis\tLabel\n\t\tNegation\t\t\tThe ferry left.\tThe ferry did not "
        "leave.\tcontradiction\n"
    )
    assert cli("curate", "import", "d", write, "--as", "glue").code == 0
    result = cli("curate", "export", "d", folder)
    assert result.code == 1 and f"{folder} is a folder: name the file to write" in result.stderr
    assert list(folder.iterdir()) == []


def test_a_study_name_too_long_for_a_file_name_is_cut_and_kept_apart(
    cli, workspace, tmp_path: Path
):
    long_a, long_b = "pilot" * 50 + "-a", "pilot" * 50 + "-b"
    for name in (long_a, long_b):
        rte_study(workspace.engine, tmp_path / name[-1], name=name)
        simulate(workspace.engine, name, 5, 0.9)
        result = cli("export", name, "--format", "labels", "--to", tmp_path / "out")
        assert result.code == 0, result.stderr
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(written) == 2 and all(len(n.encode()) < 200 for n in written)
    assert all(n.startswith("pilotpilot") and n.endswith("-labels.csv") for n in written)


def test_a_task_or_protocol_file_in_latin_1_names_its_line(cli, study, tmp_path: Path):
    protocol = tmp_path / "lab.toml"
    protocol.write_bytes(
        b'name = "lab"\ntraining_items = 6\ndescription = "caf\xe9 study"\ntest_sample = 4\n'
    )
    result = cli(
        "study", "create", "x", "--task", "superglue/rte", "--protocol", protocol,
        "--train", "val", "--test", "test",
    )  # fmt: skip
    assert result.code == 1
    assert f"{protocol}:3: not UTF-8 text (byte 19 of the line)" in result.stderr
    assert "no study named 'x'" in cli("study", "show", "x").stderr


def test_a_path_the_system_refuses_is_one_line_from_the_console_script(tmp_path: Path):
    """No check foresees /proc refusing a file: the console script still says it in a line."""
    result = _annotate("sqlite:////proc/store.db", "init")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: cannot use /proc/store.db: ")


def test_the_console_script_says_a_file_where_a_folder_is_wanted(db_url, study, tmp_path):
    taken = tmp_path / "results.csv"
    taken.write_text("")
    result = _annotate(db_url, "export", study, "--format", "labels", "--to", str(taken))
    assert (result.returncode, result.stderr) == (
        1,
        f"error: --to {taken} is a file: name a folder to write into\n",
    )


def test_two_study_names_one_file_name_would_hold_stay_two_files(cli, workspace, tmp_path):
    """`a<b` and `a>b` made safe are both `a_b`: the second export replaced the first."""
    for name in ("a<b", "a>b", "plain"):
        rte_study(workspace.engine, tmp_path / name.replace("<", "l").replace(">", "g"), name=name)
        simulate(workspace.engine, name, 5, 0.9)
        assert cli("export", name, "--format", "labels", "--to", tmp_path / "out").code == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(written) == 3 and "plain-labels.csv" in written
    assert all(n.startswith("a_b~") for n in written if n != "plain-labels.csv")


def test_a_full_disk_while_writing_is_one_line(monkeypatch, capsys):
    """A write to an open file on a full disk names no file (export, report --figures): the
    console script says the disk is full, not a traceback."""
    import errno

    import annotate.cli as cli_module

    def full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli_module, "app", full)
    with pytest.raises(SystemExit) as stopped:
        cli_module.main()
    assert stopped.value.code == 1
    said = capsys.readouterr().err
    assert said.startswith("error: the disk is full (No space left on device)")
    assert len(said.splitlines()) == 1
