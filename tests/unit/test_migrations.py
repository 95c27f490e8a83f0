"""Stores outlive versions: a store made by annotate 0.1.0 (tests/migration/store-0.1.0.db, built
by the 0.1.0 code with tests/migration/build_0_1_0_store.py) is refused with one line naming
`annotate migrate`, then migrated in place with nothing lost, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import MetaData, create_engine, select
from typer.testing import CliRunner

import annotate
from annotate.cli import app
from annotate.demo import DEMO_DATA
from annotate.errors import UserError
from annotate.report.build import WILSON_METHOD
from annotate.store import schema
from annotate.workspace import open_workspace
from tests.migration_expectations import tags_counted_once
from tests.migration_stores import earlier_store

HEAD = int(schema.SCHEMA_HEAD)

FIXTURES = Path(__file__).resolve().parents[1] / "migration"
OLD_STORE = FIXTURES / "store-0.1.0.db"
EXPECTED = json.loads((FIXTURES / "expected-0.1.0.json").read_text())
COMMANDS: dict[str, list[str]] = EXPECTED["_commands"] | {
    # 0.2.0 spells curation commands as subcommands: the same numbers, asked for in today's words.
    "curation stats": ["curate", "stats", "diag", "--format", "json"],
}
DATA_TABLES = (
    "annotator",
    "dataset",
    "item",
    "study",
    "studyitem",
    "label",
    "labelrevision",
    "lease",
    "gatedecision",
    "curation_set",
    "curation_example",
    "curation_revision",
    "curation_review",
    "curation_decision",
)
"""Every table 0.1.0 had except meta (which records the schema version, and so changes)."""
HEAD = int(schema.SCHEMA_HEAD)
"""The schema `annotate migrate` brings a store to."""


def run(url: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", url, *args])
    if isinstance(result.exception, UserError):
        return 1, result.stdout, f"error: {result.exception}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def old_store_copy(tmp_path: Path) -> Path:
    path = tmp_path / "study.db"
    shutil.copy(OLD_STORE, path)
    return path


def _columns_0_1_0() -> dict[str, list[str]]:
    engine = create_engine(f"sqlite:///{OLD_STORE}")
    meta = MetaData()
    meta.reflect(engine, only=DATA_TABLES)
    engine.dispose()
    return {name: [c.name for c in meta.tables[name].columns] for name in DATA_TABLES}


def rows_of(url: str) -> dict[str, list[tuple]]:
    """Every row of the 0.1.0 tables, in the columns 0.1.0 had (later schemas add columns)."""
    columns = _columns_0_1_0()
    engine = create_engine(url)
    meta = MetaData()
    meta.reflect(engine, only=DATA_TABLES)
    with engine.connect() as conn:
        rows = {
            name: sorted(
                tuple(str(v) for v in row)
                for row in conn.execute(
                    select(*(meta.tables[name].c[c] for c in columns[name]))
                ).all()
            )
            for name in DATA_TABLES
        }
    engine.dispose()
    return rows


def fixed_since_0_1_0(name: str, expected: dict) -> dict:
    """0.1.0's numbers, with what later releases fixed on purpose. 0.2.0: the majority-of-k
    row at the study's k uses the study's recorded tie decisions, so it equals the headline
    (0.1.0 re-broke ties at random there); an accuracy-only task quotes Wilson's interval in
    its headline (the percentile bootstrap under-covered), named in `headline_interval`.
    A study's state follows its data (issue 11): a study whose every test item has its k labels
    is "complete" (0.1.0 left a threshold-gated study in "training" forever), and an admitted
    annotator with no test item left is "done", not "test" (after 0.5.0)."""
    fixed = json.loads(json.dumps(expected))
    if name == "studies":
        for row in fixed:
            row["state"] = _state_now(row["name"], row["state"])
    elif name.startswith(("status ", "report ")):
        fixed["state"] = _state_now(fixed["study"], fixed["state"])
        if fixed["state"] == "complete":  # no test item left for anyone: "done"
            for row in fixed.get("annotators", []) + fixed.get("roster", []):
                if row.get("phase") == "test":
                    row["phase"] = "done"
    if not name.startswith("report "):
        return fixed
    if fixed["metrics"] == ["accuracy"]:
        acc = fixed["scores"]["accuracy"]
        low, high = acc["wilson_low"], acc["wilson_high"]
        fixed["headline_interval"] = {"low": low, "high": high, "method": WILSON_METHOD}
        head, _, rest = fixed["summary"].partition(" [")
        fixed["summary"] = f"{head} [{low * 100:.1f}, {high * 100:.1f}]" + rest.partition("]")[2]
    for row in fixed["majority_of_k"]:
        if row["k"] == fixed["protocol"]["annotators_per_item"]:
            row.update(
                draws=1,
                scores={m: e["value"] for m, e in fixed["scores"].items()},
                task_score=fixed["task_score"]["value"],
                task_score_sd=None,
            )
    return fixed


def _state_now(study: str, state: str) -> str:
    status = EXPECTED[f"status {study.removeprefix('old-')}"]
    return "complete" if status["items_complete"] == status["items_total"] > 0 else state


REDRAWN = ("fleiss_kappa", "gwet_ac1", "krippendorff_alpha_collapsed")
"""Agreement coefficients bootstrapped with α's draws after 0.3.0 (one resampling of the items
shared by the coefficients): their intervals are other draws of the same bootstrap."""
REDRAWN_WITHIN = 0.1
"""How far a redrawn interval end may move (a dozen items: the ends step by about 0.02)."""


def with_redrawn_intervals(fixed: dict, got: dict) -> dict:
    """`fixed` with the redrawn agreement intervals taken from `got`, after checking each end
    moved by less than `REDRAWN_WITHIN` and the interval still holds the (unchanged) value."""
    out = json.loads(json.dumps(fixed))
    for name in REDRAWN:
        then, now = fixed["agreement"].get(name), got["agreement"].get(name)
        if not then or then.get("ci_low") is None:
            continue
        assert now["value"] == then["value"], name
        for end in ("ci_low", "ci_high"):
            assert abs(now[end] - then[end]) < REDRAWN_WITHIN, (name, end, then[end], now[end])
        assert now["ci_low"] <= now["value"] <= now["ci_high"], name
        out["agreement"][name].update(ci_low=now["ci_low"], ci_high=now["ci_high"])
    return out


def assert_numbers_as_in_0_1_0(url: str, same: Callable[[object], object] = lambda x: x) -> None:
    for name, args in COMMANDS.items():
        code, out, err = run(url, *args)
        assert code == 0, (name, err)
        got = json.loads(out)
        fixed = fixed_since_0_1_0(name, EXPECTED[name])
        if name == "curation stats":  # after 0.5.0: each sentence pair's tags count once
            fixed = tags_counted_once(fixed, got)
        got = only_keys_of(fixed, got, " ".join(args))
        if name.startswith("report "):
            fixed = with_redrawn_intervals(fixed, got)
        assert got == same(fixed), f"`annotate {' '.join(args)}` changed"


def only_keys_of(expected: object, got: object, command: str) -> object:
    """`got` with the keys later releases added (the report's datasheet, a gate decision's
    reason, status's flags), at any depth, left out; a key 0.1.0 had must still be there."""
    if isinstance(expected, dict) and isinstance(got, dict):
        missing = set(expected) - set(got)
        assert not missing, f"`annotate {command}` lost {missing}"
        return {k: only_keys_of(expected[k], got[k], command) for k in expected}
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        return [only_keys_of(e, g, command) for e, g in zip(expected, got, strict=True)]
    return got


def across_backends(value: object, key: str = "") -> object:
    """The expected numbers, as PostgreSQL must give them. They were computed on SQLite, and two
    differ on PostgreSQL in 0.1.0 already, migration or not: seconds (SQLite's julianday
    arithmetic is off by up to some milliseconds) and the random annotator subsets of the
    majority-of-k curve below the study's k (drawn from rows in the order the backend returns
    them: those rows are left out of the comparison). The rest must be equal to 1e-9."""
    if isinstance(value, dict):
        kept = {k: across_backends(v, k) for k, v in value.items()}
        if isinstance(kept.get("majority_of_k"), list):
            kept["majority_of_k"] = AtStudyK(kept["majority_of_k"])
        return kept
    if isinstance(value, list):
        return [across_backends(v, key) for v in value]
    if isinstance(value, float):
        return pytest.approx(value, abs=0.02 if "seconds" in key else 1e-9)
    return value


class AtStudyK(list):
    """Equal to a majority-of-k curve whose row at the study's k (5) is this one's."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, list) and [r for r in other if r["k"] == 5] == [
            r for r in self if r["k"] == 5
        ]

    __hash__ = None  # type: ignore[assignment]


# --- before migrating: one line, nothing written ----------------------------------------------


def test_every_command_on_an_old_store_names_migrate_and_the_backup(tmp_path: Path):
    path = old_store_copy(tmp_path)
    url = f"sqlite:///{path}"
    before = rows_of(url)
    commands = [
        *COMMANDS.values(),
        ["check"],
        ["annotator", "list"],
        ["study", "show", "old-rte"],
        ["export", "old-rte", "--to", str(tmp_path / "out"), "--format", "superglue"],
        ["import", "glue/sst2", str(DEMO_DATA / "sst2" / "dev.tsv"), "--split", "dev"],
        ["simulate", "old-rte", "--annotators", "2", "--accuracy", "0.8"],
        ["gate", "old-sst2", "--close"],
    ]
    for args in commands:
        code, _out, err = run(url, *args)
        assert code == 1, args
        assert err.count("\n") <= 1 and "Traceback" not in err, err
        assert "`annotate migrate`" in err and "schema 1 (written by annotate 0.1.0)" in err, err
        assert "study-schema1-backup.db" in err, err
    assert rows_of(url) == before
    assert not (tmp_path / "study-schema1-backup.db").exists()


def test_the_console_script_prints_one_line_for_an_old_store(tmp_path: Path):
    path = old_store_copy(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "annotate", "--db", str(path), "report", "old-rte"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    # One line of error, no traceback; then, as --db was typed, the note that the suggested
    # `annotate migrate` needs it too (copied alone it would open the default store).
    error, note = done.stderr.splitlines()
    assert error.startswith("error: the store ") and "annotate migrate" in error
    assert note.startswith("note: ") and f"annotate --db {path} …" in note


def test_migrate_on_a_store_another_process_is_writing_is_one_line_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """It was a traceback ending in "database is locked [SQL: BEGIN IMMEDIATE]"."""
    from annotate.cli import main
    from annotate.store import engine

    path = old_store_copy(tmp_path)
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA journal_mode=WAL")  # as every annotate left its stores
    before = rows_of(f"sqlite:///{path}")
    # SQLite's wait for the lock, cut short (the rule is the same after 5 s).
    pragmas = tuple(p.replace("5000", "0") for p in engine.SQLITE_PRAGMAS)
    monkeypatch.setattr(engine, "SQLITE_PRAGMAS", pragmas)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # an import in progress in another process
    try:
        monkeypatch.setattr(sys, "argv", ["annotate", "--db", str(path), "migrate"])
        with pytest.raises(SystemExit) as exited:
            main()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("error: the store is busy (database is locked)"), err
    assert "run the command again" in err.lower()
    assert rows_of(f"sqlite:///{path}") == before
    assert not (tmp_path / "study-schema1-backup.db").exists()
    monkeypatch.undo()
    assert run(f"sqlite:///{path}", "migrate")[0] == 0  # once the other process is done


def test_init_on_an_old_store_does_not_touch_it(tmp_path: Path):
    url = f"sqlite:///{old_store_copy(tmp_path)}"
    code, _, err = run(url, "init")
    assert code == 1 and "annotate migrate" in err


# --- migrating ----------------------------------------------------------------------------------


def test_migrate_keeps_every_row_and_every_number(tmp_path: Path):
    path = old_store_copy(tmp_path)
    url = f"sqlite:///{path}"
    before = rows_of(url)
    assert before["labelrevision"] and before["gatedecision"] and before["curation_review"]
    assert any(row[2] != "None" for row in before["annotator"])  # a token hash

    code, out, err = run(url, "migrate")
    assert code == 0, err
    backup = tmp_path / "study-schema1-backup.db"
    assert f"backup of the store written to {backup}" in out
    assert f"from schema 1 to {HEAD}" in out

    assert rows_of(url) == before
    # Schema 4 adds annotator.synthetic: every annotator of 0.1.0 migrates as not synthetic.
    with sqlite3.connect(path) as con:
        assert {r[0] for r in con.execute("SELECT synthetic FROM annotator")} == {0}
    assert_numbers_as_in_0_1_0(url)
    # The backup is the untouched 0.1.0 store: it still asks to be migrated.
    assert rows_of(f"sqlite:///{backup}") == before
    with sqlite3.connect(backup) as con:
        assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("1",)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "alembic_version" not in tables
    # What annotate 0.1.0 reads (meta.schema_version) now says 2, so 0.1.0 refuses the store.
    with sqlite3.connect(path) as con:
        assert dict(con.execute("SELECT key, value FROM meta")) == {
            "schema_version": str(HEAD),
            "annotate_version": annotate.__version__,
        }
        assert con.execute("PRAGMA foreign_keys").fetchone() == (0,)  # a fresh connection
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    code, out, _ = run(url, "migrate")
    assert code == 0 and f"at schema {HEAD} already: nothing to do" in out
    code, out, _ = run(url, "check")
    assert code == 0 and "no violation" in out


def test_a_migration_that_fails_leaves_the_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    path = old_store_copy(tmp_path)
    url = f"sqlite:///{path}"
    before = rows_of(url)

    def broken(conn) -> None:
        raise UserError("the migration would leave 1 row pointing at nothing; nothing changed")

    monkeypatch.setattr(schema, "_check_foreign_keys", broken)
    code, _, err = run(url, "migrate")
    assert code == 1 and "nothing changed" in err
    assert rows_of(url) == before
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("1",)
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "alembic_version" not in names
    monkeypatch.undo()
    assert "annotate migrate" in run(url, "status", "old-rte")[2]  # still asks, still works
    assert run(url, "migrate")[0] == 0


def test_an_old_store_with_a_row_pointing_at_nothing_is_refused_with_a_way_out(tmp_path: Path):
    """It said "... (first: ('label', 260, 'annotator', 0)); nothing changed: run `annotate
    check`", and `annotate check` refused the old store with "run `annotate migrate`"."""
    path = old_store_copy(tmp_path)
    url = f"sqlite:///{path}"
    with sqlite3.connect(path) as con:  # a label whose annotator was deleted by hand
        con.execute("PRAGMA foreign_keys=OFF")
        con.execute("UPDATE label SET annotator_id = 999 WHERE id = (SELECT max(id) FROM label)")
        (rowid,) = con.execute("SELECT max(id) FROM label").fetchone()
    before = rows_of(url)
    code, _, err = run(url, "migrate")
    assert code == 1
    assert f"label row {rowid} points to a missing annotator row" in err, err
    assert "nothing changed" in err and "delete those rows" in err
    assert "annotate check" not in err  # which refuses an old store
    assert rows_of(url) == before
    assert not list(tmp_path.glob("study-schema1-backup*"))
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM label WHERE id = ?", (rowid,))
    assert run(url, "migrate")[0] == 0


def test_a_second_old_copy_gets_a_backup_name_of_its_own(tmp_path: Path):
    path = old_store_copy(tmp_path)
    (tmp_path / "study-schema1-backup.db").write_text("an earlier backup, kept")
    code, _, err = run(f"sqlite:///{path}", "status", "old-rte")
    assert "study-schema1-backup-2.db" in err
    code, out, _ = run(f"sqlite:///{path}", "migrate")
    assert code == 0 and "study-schema1-backup-2.db" in out
    assert (tmp_path / "study-schema1-backup.db").read_text() == "an earlier backup, kept"


def test_a_migrate_that_waited_for_another_writes_no_backup_of_the_new_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Two `annotate migrate` at once: the second, once the first let go of the store, wrote
    study-schema1-backup-2.db holding schema 20 (not what going back needs) and said
    "migrated from schema 1 to 20" again."""
    from annotate.store.engine import make_engine

    path = old_store_copy(tmp_path)
    url = f"sqlite:///{path}"
    read_before_the_lock = schema.read_revision
    others: list[schema.Migration | None] = []

    def the_other_migrate_finishes_meanwhile(engine):
        revision = read_before_the_lock(engine)
        if not others:  # the other process, between this one's first look and its lock
            others.append(None)
            others[0] = schema.migrate_store(make_engine(url))
        return revision

    monkeypatch.setattr(schema, "read_revision", the_other_migrate_finishes_meanwhile)
    code, out, err = run(url, "migrate")
    assert code == 0, err
    assert others[0] is not None and others[0].backup == tmp_path / "study-schema1-backup.db"
    assert f"at schema {HEAD} already: nothing to do" in out, out
    assert "backup" not in out
    assert sorted(p.name for p in tmp_path.glob("study-schema*")) == ["study-schema1-backup.db"]
    with sqlite3.connect(tmp_path / "study-schema1-backup.db") as con:
        assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("1",)


def test_an_old_store_can_be_backed_up_before_migrating(tmp_path: Path):
    url = f"sqlite:///{old_store_copy(tmp_path)}"
    code, _out, err = run(url, "backup", str(tmp_path / "copy.db"))
    assert code == 0, err
    assert rows_of(f"sqlite:///{tmp_path / 'copy.db'}") == rows_of(url)


# --- versions this annotate does not know -------------------------------------------------------


def set_meta(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as con:
        con.executescript(sql)


def test_a_store_from_a_newer_annotate_is_refused_with_both_versions(tmp_path: Path):
    path = tmp_path / "new.db"
    url = f"sqlite:///{path}"
    assert run(url, "init")[0] == 0
    set_meta(
        path,
        "UPDATE alembic_version SET version_num='0042';"
        "UPDATE meta SET value='7.1.0' WHERE key='annotate_version';",
    )
    for args in (["datasets"], ["migrate"], ["study", "list"]):
        code, _, err = run(url, *args)
        assert code == 1
        assert "schema 42 (written by annotate 7.1.0)" in err, err
        assert (
            f"this is annotate {annotate.__version__}, which reads schema up to "
            f"{int(schema.SCHEMA_HEAD)}" in err
        )


def test_a_store_from_a_later_build_of_this_release_is_not_said_to_be_written_by_it(
    tmp_path: Path,
):
    """A newer checkout of the same version number migrated the shared store: it said
    "written by annotate 0.5.0); this is annotate 0.5.0 ...: upgrade annotate"."""
    path = tmp_path / "new.db"
    url = f"sqlite:///{path}"
    assert run(url, "init")[0] == 0
    set_meta(path, "UPDATE alembic_version SET version_num='0042';")
    for args in (["datasets"], ["migrate"], ["check"]):
        code, _, err = run(url, *args)
        assert code == 1
        assert f"schema 42 (written by a later build of annotate {annotate.__version__})" in err
        assert "upgrade annotate to use this store" in err


@pytest.mark.parametrize("value", ["abc", "", "3"])
def test_a_damaged_version_record_is_a_clear_error(tmp_path: Path, value: str):
    path = old_store_copy(tmp_path)
    set_meta(path, f"UPDATE meta SET value='{value}' WHERE key='schema_version';")
    for args in (["status", "old-rte"], ["migrate"]):
        code, _, err = run(f"sqlite:///{path}", *args)
        assert code == 1 and "unreadable schema version" in err, err


def test_another_programs_database_is_not_migrated(tmp_path: Path):
    path = tmp_path / "other.db"
    set_meta(path, "CREATE TABLE invoices (id INTEGER PRIMARY KEY);")
    code, _, err = run(f"sqlite:///{path}", "migrate")
    assert code == 1 and "is not an annotate store" in err


# --- the scripts and the models agree -----------------------------------------------------------


def test_the_revision_list_and_version_match_the_scripts_and_the_package():
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(schema.MIGRATIONS))
    chain = [s.revision for s in reversed(list(scripts.walk_revisions()))]
    assert tuple(chain) == schema.SCHEMA_REVISIONS
    assert scripts.get_current_head() == schema.SCHEMA_HEAD
    assert [int(r) for r in chain] == list(range(1, len(chain) + 1))  # revision N is schema N
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["version"] == annotate.__version__
    assert schema.SCHEMA_RELEASES[schema.SCHEMA_HEAD] == annotate.__version__ or (
        annotate.__version__ > schema.SCHEMA_RELEASES[schema.SCHEMA_HEAD]
    )


def test_version_option_prints_the_version_and_schema():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"annotate {annotate.__version__} (store schema {HEAD})"


def schema_of(url: str) -> dict[str, object]:
    """Tables, columns (name, type, nullability), indexes and unique constraints."""
    from sqlalchemy import inspect

    engine = create_engine(url)
    insp = inspect(engine)
    found: dict[str, object] = {}
    for table in sorted(insp.get_table_names()):
        found[table] = {
            "columns": [
                (c["name"], str(c["type"]).split("(")[0], c["nullable"])
                for c in insp.get_columns(table)
            ],
            "indexes": sorted(
                (i["name"], tuple(map(str, i["column_names"]))) for i in insp.get_indexes(table)
            ),
            "unique": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(table)),
            "foreign_keys": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in insp.get_foreign_keys(table)
            ),
        }
    engine.dispose()
    return found


def test_migrating_an_old_store_gives_the_schema_init_creates(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    """Any migration whose result differs from the table models (a model changed without its
    script, or a script that does something else) fails here, on both backends."""
    fresh = new_store_url()
    open_workspace(fresh, create=True).engine.dispose()
    migrated = old_store_url(backend, new_store_url, tmp_path)
    assert run(migrated, "migrate")[0] == 0
    assert schema_of(migrated) == schema_of(fresh)


# --- PostgreSQL: the same 0.1.0 store, loaded into a 0.1.0 schema ---------------------------------


def old_store_url(backend: str, new_store_url: Callable[[], str], tmp_path: Path) -> str:
    """The 0.1.0 fixture store on the test's backend. On PostgreSQL: the 0.1.0 tables (made by
    migration 0001, as 0.1.0 left them: no alembic_version), then every row of the fixture."""
    if backend == "sqlite":
        return f"sqlite:///{old_store_copy(tmp_path)}"
    # meta: migration 0001 wrote schema_version 1
    return earlier_store(
        OLD_STORE, "0001", DATA_TABLES, backend, new_store_url, tmp_path, unstamped=True
    )


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_migrate_on_postgresql_keeps_every_number(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = old_store_url(backend, new_store_url, tmp_path)
    code, _, err = run(url, "report", "old-rte")
    assert code == 1 and "annotate migrate" in err and "pg_dump" in err
    code, out, err = run(url, "migrate")
    assert code == 0, err
    assert "backup" not in out and f"from schema 1 to {HEAD}" in out
    assert_numbers_as_in_0_1_0(url, across_backends)


def test_an_old_store_opened_by_the_api_names_the_backup_as_a_path(tmp_path: Path):
    path = old_store_copy(tmp_path)
    with pytest.raises(schema.StoreNeedsMigration) as raised:
        annotate.open_store(path)
    message = str(raised.value)
    assert f"backs the store up to {tmp_path / 'study-schema1-backup.db'})" in message
    assert "file:" not in message.split("backs the store up to")[1]


@pytest.mark.parametrize(
    ("store", "written"),
    [
        ("store-0.4.2.db", "schema 11 (written by annotate 0.4.2)"),
        # A development build's store: its release number is this one's, its schema older.
        ("store-0.5.0-mnli.db", "schema 15 (written by an earlier build of annotate 0.5.0)"),
    ],
)
def test_an_old_store_is_named_by_the_release_that_wrote_it(tmp_path: Path, store, written):
    """It said "schema 11 (annotate 0.3.0)" of a store 0.4.2 made (the first release of that
    schema), and "schema 15 (annotate 0.5.0) and annotate 0.5.0 needs schema 20"."""
    path = tmp_path / "study.db"
    shutil.copy(FIXTURES / store, path)
    code, _out, err = run(f"sqlite:///{path}", "study", "list")
    assert code == 1 and written in err, err
    assert f"annotate {annotate.__version__} needs schema {int(schema.SCHEMA_HEAD)}" in err


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_migrate_on_postgresql_says_once_that_it_waits_for_another_sessions_lock(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path, monkeypatch
):
    """A session reading a table (a console, a page) held its lock: `migrate` waited without a
    word. It says so once on stderr, then migrates when the lock is given back."""
    import threading

    import psycopg

    url = old_store_url(backend, new_store_url, tmp_path)
    monkeypatch.setattr(schema, "LOCK_NOTICE_MS", 300)
    holder = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    holder.execute("LOCK TABLE label IN ACCESS SHARE MODE")  # its transaction stays open
    release = threading.Timer(2.0, holder.rollback)
    release.start()
    try:
        code, out, err = run(url, "migrate")
    finally:
        release.join()
        holder.close()
    assert code == 0, err
    assert f"from schema 1 to {HEAD}" in out
    assert err.count("waiting for another session's lock") == 1, err
    assert_numbers_as_in_0_1_0(url, across_backends)
