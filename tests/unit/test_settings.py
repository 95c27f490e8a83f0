"""ANNOTATE_* variables are read through annotate.settings: typed, documented, and a bad value
is one line naming the variable."""

from __future__ import annotations

import os

import pytest

from annotate.errors import UserError
from annotate.settings import documented, settings
from annotate.specs import search_dirs


def test_values_are_typed_and_defaults_hold():
    s = settings({"ANNOTATE_RECONNECT_SECONDS": "2.5", "ANNOTATE_DEBUG": "yes"})
    assert s.reconnect_seconds == 2.5 and s.debug is True
    assert settings({}).reconnect_seconds == 30.0 and settings({}).db is None
    assert settings({"ANNOTATE_DB": ""}).db is None


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ANNOTATE_RECONNECT_SECONDS", "soon"),
        ("ANNOTATE_DEBUG", "maybe"),
        ("ANNOTATE_SERVE_TOKENS", "x"),
    ],
)
def test_a_bad_value_names_the_variable(variable: str, value: str):
    with pytest.raises(UserError, match=variable):
        settings({variable: value})


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
