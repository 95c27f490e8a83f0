"""ANNOTATE_* variables are read through annotate.settings: typed, documented, and a bad value
is one line naming the variable."""

from __future__ import annotations

import os

import pytest

from annotate.errors import UserError
from annotate.settings import documented, settings
from annotate.specs import search_dirs


@pytest.fixture(autouse=True)
def no_settings_around(monkeypatch, tmp_path):
    """Only the variables a test sets, and no project file in the current folder."""
    for name in documented():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_values_are_typed_and_defaults_hold(monkeypatch):
    monkeypatch.setenv("ANNOTATE_RECONNECT_SECONDS", "2.5")
    monkeypatch.setenv("ANNOTATE_DEBUG", "yes")
    s = settings()
    assert s.reconnect_seconds == 2.5 and s.debug is True
    monkeypatch.delenv("ANNOTATE_RECONNECT_SECONDS")
    monkeypatch.delenv("ANNOTATE_DEBUG")
    assert settings().reconnect_seconds == 30.0 and settings().db is None
    monkeypatch.setenv("ANNOTATE_DB", "")
    assert settings().db is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("true", True), ("YES", True), ("on", True), ("0", False), ("no", False)],
)
def test_debug_takes_the_spellings_the_docs_name(monkeypatch, value: str, expected: bool):
    monkeypatch.setenv("ANNOTATE_DEBUG", value)
    assert settings().debug is expected


def test_a_changed_variable_is_read_on_the_next_call(monkeypatch):
    monkeypatch.setenv("ANNOTATE_RECONNECT_SECONDS", "2")
    assert settings().reconnect_seconds == 2
    monkeypatch.setenv("ANNOTATE_RECONNECT_SECONDS", "3")
    assert settings().reconnect_seconds == 3


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ANNOTATE_RECONNECT_SECONDS", "soon"),
        ("ANNOTATE_DEBUG", "maybe"),
        ("ANNOTATE_SERVE_TOKENS", "x"),
    ],
)
def test_a_bad_value_names_the_variable(monkeypatch, variable: str, value: str):
    monkeypatch.setenv(variable, value)
    with pytest.raises(UserError, match=variable) as raised:
        settings()
    assert str(raised.value).startswith(f"{variable}={value!r}: ")


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_reconnect_time_that_is_no_duration_is_refused(monkeypatch, value: str):
    """nan made a deadline never reached: a command retried a server that was gone forever."""
    monkeypatch.setenv("ANNOTATE_RECONNECT_SECONDS", value)
    with pytest.raises(UserError) as raised:
        settings()
    assert str(raised.value).startswith(f"ANNOTATE_RECONNECT_SECONDS={value!r}: Input should be")


def test_a_bad_debug_value_says_what_it_takes(monkeypatch):
    monkeypatch.setenv("ANNOTATE_DEBUG", "maybe")
    with pytest.raises(UserError) as raised:
        settings()
    assert str(raised.value) == "ANNOTATE_DEBUG='maybe': expected 1 or 0 (true or false)"


def test_every_setting_is_documented():
    assert all(len(text) > 20 for text in documented().values())


def test_the_task_search_path_comes_from_the_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("ANNOTATE_TASKS_PATH", f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    assert search_dirs("tasks")[1:] == [tmp_path / "a", tmp_path / "b"]


def test_a_bad_setting_is_one_line_on_the_command_line(tmp_path):
    import subprocess
    import sys

    env = {
        **os.environ,
        "ANNOTATE_RECONNECT_SECONDS": "soon",
        "ANNOTATE_DB": str(tmp_path / "x.db"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "annotate", "init"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: ANNOTATE_RECONNECT_SECONDS='soon'")
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "x.db").exists()


def test_a_task_or_protocol_folder_never_takes_a_built_in_ones_place(monkeypatch, tmp_path):
    """The folders are searched after the built-in ones: a file named like a built-in task (or
    one of its spellings) or preset does not replace it, nor make its name ambiguous, and a
    broken file there stops no benchmark's tasks."""
    from annotate import specs
    from annotate.scoring.benchmark import benchmark_tasks

    tasks, protocols = tmp_path / "tasks", tmp_path / "protocols"
    tasks.mkdir()
    protocols.mkdir()
    toy = (specs.builtin_dir("tasks") / "glue" / "rte.toml").read_text()
    for name in ("sst2", "SST-2"):
        (tasks / f"{name}.toml").write_text(toy.replace('title = "', 'title = "Mine: ', 1))
    (tasks / "broken.toml").write_text('benchmark = "custom"\n')  # no kind
    (protocols / "quick.toml").write_text(
        (specs.builtin_dir("protocols") / "glue-2019.toml").read_text()
    )
    monkeypatch.setenv("ANNOTATE_TASKS_PATH", str(tasks))
    monkeypatch.setenv("ANNOTATE_PROTOCOLS_PATH", str(protocols))
    specs.clear_caches()
    try:
        for spelling, built_in in (
            ("sst2", "glue/sst2"),
            ("SST-2", "glue/sst2"),
        ):
            spec = specs.load_task(spelling)
            assert spec.name == built_in and not spec.title.startswith("Mine")
        builtin_quick = specs.load_protocol_file(specs.builtin_dir("protocols") / "quick.toml")
        assert specs.load_protocol("quick") == builtin_quick
        assert {t.name for t in benchmark_tasks("glue")} >= {"glue/sst2", "glue/rte"}
    finally:
        monkeypatch.delenv("ANNOTATE_TASKS_PATH")
        monkeypatch.delenv("ANNOTATE_PROTOCOLS_PATH")
        specs.clear_caches()


@pytest.mark.parametrize("value", ["maybe", "y"])
def test_a_bad_debug_value_is_one_line_on_the_command_line(tmp_path, value: str):
    """Click read ANNOTATE_DEBUG by its own rule: `maybe` was a usage error of three lines
    (status 2), and `y` turned debugging on for the settings to refuse, with a traceback."""
    import subprocess
    import sys
    from pathlib import Path

    env = {**os.environ, "ANNOTATE_DEBUG": value, "ANNOTATE_DB": str(tmp_path / "x.db")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])  # this checkout's annotate
    done = subprocess.run(
        [sys.executable, "-m", "annotate", "init"], capture_output=True, text=True, env=env
    )
    assert (done.returncode, done.stderr) == (
        1,
        f"error: ANNOTATE_DEBUG={value!r}: expected 1 or 0 (true or false)\n",
    )
    assert not (tmp_path / "x.db").exists()
