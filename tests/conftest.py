"""Shared fixtures: a throwaway store and a CLI runner pointed at it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotate.cli import app
from annotate.errors import UserError
from annotate.workspace import open_workspace

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def workspace(db_url: str):
    ws = open_workspace(db_url, create=True)
    yield ws
    ws.engine.dispose()


@pytest.fixture
def cli(db_url: str, monkeypatch: pytest.MonkeyPatch):
    """Run `annotate ARGS` against the test store, as the console script would: a UserError
    becomes exit status 2 with `error: …` on stderr."""
    monkeypatch.delenv("ANNOTATE_DB", raising=False)

    def invoke(*args: str) -> CliResult:
        result = CliRunner().invoke(app, ["--db", db_url, *map(str, args)])
        if isinstance(result.exception, UserError):
            return CliResult(2, result.stdout, result.stderr + f"error: {result.exception}\n")
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


def shared_file(relative: str) -> Path:
    """A real data file from ../shared/data, or skip the test when it is absent (fresh clone)."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not present: {path}")
    return path
