"""A file that is not a store, or a store with damaged pages or a missing table, given as --db:
every command says so in one line naming the file, and exits 1 (`check` included)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from annotate.workspace import open_workspace


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(20_000))


def _csv(path: Path) -> None:
    path.write_text("index,sentence,label\n0,a CSV passed as --db by mistake,1\n")


def _store_with(path: Path, damage) -> None:
    ws = open_workspace(f"sqlite:///{path}", create=True)
    ws.engine.dispose()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    conn.close()
    damage(path)


def _damaged_pages(path: Path) -> None:
    """Overwrite pages 3-20 with garbage: the b-trees of datasets, studies, items … (page 1
    holds the table list and page 2 the schema version, so the store still opens)."""

    def scribble(p: Path) -> None:
        with p.open("r+b") as f:
            f.seek(4096 * 2)
            f.write(b"\xde\xad\xbe\xef" * 1024 * 18)

    _store_with(path, scribble)


def _missing_table(path: Path) -> None:
    def drop(p: Path) -> None:
        with sqlite3.connect(p) as conn:
            conn.execute("DROP TABLE label")

    _store_with(path, drop)


DAMAGE = {
    "random bytes": (_random_bytes, "is not a SQLite database"),
    "a CSV file": (_csv, "is not a SQLite database"),
    "damaged pages": (_damaged_pages, "is damaged"),
    "a missing table": (_missing_table, "lacks the table(s) label"),
}


@pytest.fixture(params=list(DAMAGE))
def damage(request) -> tuple[str, str]:
    return request.param


@pytest.fixture
def db_url(tmp_path: Path, damage: str) -> str:
    path = tmp_path / ("store.csv" if damage == "a CSV file" else "store.db")
    DAMAGE[damage][0](path)
    return f"sqlite:///{path}"


@pytest.mark.parametrize(
    "args", [("datasets",), ("status", "s"), ("check",), ("check", "--format", "json")]
)
def test_a_damaged_or_foreign_store_is_one_line_and_exit_1(cli, db_url, damage, args):
    result = cli(*args)
    assert result.code == 1, (result.stdout, result.stderr)
    error = result.stderr.strip()
    assert "\n" not in error and error.startswith("error: "), error
    assert db_url in error and DAMAGE[damage][1] in error, error
    assert "Traceback" not in result.stdout + result.stderr


def test_the_console_script_prints_one_line_and_exits_1(tmp_path: Path):
    import subprocess
    import sys

    path = tmp_path / "random.db"
    _random_bytes(path)
    env = {**os.environ, "ANNOTATE_DB": str(path)}
    env.pop("ANNOTATE_DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-m", "annotate", "check"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    debug = subprocess.run(
        [sys.executable, "-m", "annotate", "--debug", "check"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_exactly_the_curation_tables_may_be_missing_from_a_current_store(tmp_path: Path):
    """The check names the curation tables by their prefix (it does not load their models):
    the prefix covers every curation table and no other, and a store without them opens."""
    from sqlmodel import SQLModel

    from annotate.store import models
    from annotate.store.curation_models import CURATION_TABLES
    from annotate.store.schema import CURATION_PREFIX

    curation = {table.name for table in CURATION_TABLES}
    assert models and all(name.startswith(CURATION_PREFIX) for name in curation)
    others = set(SQLModel.metadata.tables) - curation
    assert others and not any(name.startswith(CURATION_PREFIX) for name in others)

    path = tmp_path / "store.db"
    _store_with(path, lambda p: None)
    with sqlite3.connect(path) as conn:
        for name in curation:
            conn.execute(f"DROP TABLE {name}")
        conn.execute("DROP TABLE visit")
    with pytest.raises(Exception, match=r"lacks the table\(s\) visit\."):
        open_workspace(f"sqlite:///{path}")


def test_a_store_deleted_under_a_running_session_saves_nothing_and_says_so(tmp_path: Path):
    """SQLite writes on through its open descriptors to a file that was deleted (or whose
    folder was removed): every answer was acknowledged, then lost with the process. The
    write is refused instead, as a failure a screen holds and retries (is_held)."""
    import shutil

    from annotate.protocol.session import AnnotatorSession
    from annotate.store.engine import is_held
    from annotate.store.failures import StorageError
    from tests.engine_helpers import rte_study

    folder = tmp_path / "lab"
    folder.mkdir()
    workspace = open_workspace(str(folder / "lab.db"), create=True)
    rte_study(workspace.engine, tmp_path, train=2, test=3, training_items=0)
    session = AnnotatorSession.open(workspace.engine, "pilot", "ana", create_annotator=True)
    item = session.next_item()
    shutil.rmtree(folder)
    with pytest.raises(StorageError, match="is gone") as refused:
        session.submit_and_next(item, "entailment")
    assert is_held(refused.value) and "lab.db" in str(refused.value)
    workspace.engine.dispose()


def test_the_writers_lock_file_takes_the_stores_permissions(tmp_path: Path):
    """A lab group's store (chmod 660, the SSH recipe): the lock file its writers take turns
    on is group-writable too, whatever the umask, as SQLite makes its -wal and -shm files."""
    import stat

    from annotate.protocol.studies import add_annotator

    store = tmp_path / "lab.db"
    workspace = open_workspace(str(store), create=True)
    lock = tmp_path / "lab.db.writers"
    lock.unlink(missing_ok=True)
    store.chmod(0o660)
    old = os.umask(0o022)
    try:
        add_annotator(workspace.engine, "ana")
    finally:
        os.umask(old)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o660
    workspace.engine.dispose()


def test_a_store_in_a_folder_with_accents_is_named_as_written(tmp_path: Path, monkeypatch):
    """A store under `Études d'été/` was named `%C3%89tudes d'%C3%A9t%C3%A9/` in every error
    (`migrate` and `init` too), a folder the user never wrote: it is named as they wrote it."""
    from typer.testing import CliRunner

    from annotate.cli import app

    monkeypatch.delenv("ANNOTATE_DB", raising=False)
    folder = tmp_path / "Études d'été"
    folder.mkdir()
    _random_bytes(folder / "bytes.db")
    with sqlite3.connect(folder / "other.db") as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    open_workspace(f"sqlite:///{folder / 'store.db'}", create=True).engine.dispose()
    for name, args, said in (
        ("bytes.db", ["datasets"], "is not a SQLite database"),
        ("other.db", ["datasets"], "is not an annotate store"),
        ("store.db", ["migrate"], "is at schema"),
        ("new.db", ["init"], "store ready at"),  # Workspace.shown, the same rule
    ):
        result = CliRunner().invoke(app, ["--db", str(folder / name), *args])
        shown = f"{result.output}{result.exception or ''}"
        assert f"sqlite:///{folder / name}" in shown and said in shown, shown
