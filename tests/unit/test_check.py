"""`annotate check` finds each broken invariant (and nothing in a healthy store, on both
backends); `annotate backup` copies a live SQLite store consistently."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text, update
from sqlmodel import Session, select

from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.simulate import simulate
from annotate.store.backup import backup_store
from annotate.store.check import check_store
from annotate.store.models import Annotator, GateDecision, Label, StudyItem, utcnow
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study


@pytest.fixture
def db_url(store_url: str) -> str:
    """The checks run on both backends (conftest's `workspace` and `cli` open this URL)."""
    return store_url


@pytest.fixture
def finished(workspace, tmp_path: Path):
    """A study filled by simulated annotators: every item has its k labels."""
    ctx = rte_study(
        workspace.engine, tmp_path, name="done", train=4, test=12, annotators_per_item=3
    )
    simulate(workspace.engine, "done", annotators=4, accuracy=0.9, seed=3)
    return ctx


def kinds(engine) -> list[str]:
    return sorted(v.check for v in check_store(engine).violations)


def test_a_healthy_store_has_no_violation(cli, workspace, finished):
    report = check_store(workspace.engine)
    assert report.ok and report.studies == 1 and report.labels > 36
    result = cli("check")
    assert result.code == 0 and "no violation" in " ".join(result.stdout.split())
    data = cli("check", "--format", "json").json()
    assert data["ok"] and data["violations"] == []
    assert {"labels_over_k", "test_label_without_gate", "duplicate_label"} <= set(data["checks"])


def add_test_label(engine, ctx, annotator: str, item_id: int, count: bool = True) -> None:
    """Write a test label around the engine, as a buggy tool or a bad restore might."""
    with Session(engine) as s:
        who = Annotator(name=annotator)
        s.add(who)
        s.flush()
        s.add(
            Label(
                study_id=ctx.id,
                item_id=item_id,
                annotator_id=who.id,
                phase="test",
                value="entailment",
                shown_at=utcnow(),
                answered_at=utcnow(),
            )
        )
        if count:
            s.execute(
                update(StudyItem)
                .where(
                    StudyItem.study_id == ctx.id,
                    StudyItem.item_id == item_id,
                    StudyItem.phase == "test",
                )
                .values(n_labels=StudyItem.n_labels + 1)
            )
        s.commit()
        return who.id


def first_test_item(engine, ctx) -> int:
    with Session(engine) as s:
        return s.exec(
            select(StudyItem.item_id).where(StudyItem.study_id == ctx.id, StudyItem.phase == "test")
        ).first()


def test_a_label_beyond_k_without_a_gate_is_reported(cli, workspace, finished):
    item = first_test_item(workspace.engine, finished)
    add_test_label(workspace.engine, finished, "intruder", item)
    assert kinds(workspace.engine) == ["labels_over_k", "test_label_without_gate"]
    result = cli("check")
    assert result.code == 1
    out = " ".join(result.stdout.split())
    assert "2 violations" in out and "intruder" in out and "k = 3" in out


def test_a_counter_out_of_step_with_the_labels_is_reported(workspace, finished):
    item = first_test_item(workspace.engine, finished)
    with Session(workspace.engine) as s:
        s.execute(update(StudyItem).where(StudyItem.item_id == item).values(n_labels=1))
        s.commit()
    assert kinds(workspace.engine) == ["label_counter"]


def test_a_test_label_after_a_refusal_only_is_reported(workspace, tmp_path):
    ctx = rte_study(workspace.engine, tmp_path, name="gate", train=2, test=3, gate_threshold=0.0)
    s = AnnotatorSession.open(workspace.engine, "gate", "ana", create_annotator=True)
    while s.phase() is Phase.TRAINING:
        s.submit(s.next_item(), "entailment")
    s.submit(s.next_item(), "entailment")
    assert check_store(workspace.engine).ok
    with Session(workspace.engine) as db:  # the admission vanishes: say, a bad manual edit
        for d in db.exec(select(GateDecision).where(GateDecision.study_id == ctx.id)):
            d.admitted = False
        db.commit()
    assert kinds(workspace.engine) == ["test_label_without_gate"]


def test_a_label_on_an_item_outside_the_study_is_reported(workspace, finished, tmp_path):
    other = rte_study(workspace.engine, tmp_path / "other", name="other", train=2, test=3)
    stray = first_test_item(workspace.engine, other)
    add_test_label(workspace.engine, finished, "stray", stray, count=False)
    assert "label_outside_study" in kinds(workspace.engine)


def test_an_answer_edited_by_hand_into_no_json_is_reported(tmp_path: Path):
    """SQLite keeps any text in a JSON column: `check` said "no violation" of a store whose
    report and export then failed reading the answer."""
    db = tmp_path / "edited.db"
    ws = open_workspace(str(db), create=True)
    rte_study(ws.engine, tmp_path, name="edited", train=2, test=3, annotators_per_item=2)
    simulate(ws.engine, "edited", annotators=2, accuracy=0.9)
    ws.engine.dispose()
    with sqlite3.connect(db) as conn:
        (rowid,) = conn.execute("SELECT min(id) FROM label").fetchone()
        conn.execute("UPDATE label SET value = '{' WHERE id = ?", (rowid,))
    engine = open_workspace(str(db)).engine
    report = check_store(engine)
    engine.dispose()
    assert not report.ok  # `annotate check` exits 1, listing:
    assert [v.detail for v in report.violations] == [f"label row {rowid}: value is not JSON"]


@pytest.mark.parametrize("column", ["label.value", "item.gold"])
def test_report_and_export_of_a_cell_edited_into_no_json_name_it_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str
):
    """`report` and `export` of such a store ended in a traceback (json's "Expecting property
    name…"): they refuse it in the words `check` uses, and point to it."""
    from tests.conftest import cli as cli_fixture

    db = tmp_path / "edited.db"
    ws = open_workspace(str(db), create=True)
    rte_study(ws.engine, tmp_path, name="edited", train=2, test=3, annotators_per_item=2)
    simulate(ws.engine, "edited", annotators=2, accuracy=0.9)
    ws.engine.dispose()
    table, name = column.split(".")
    with sqlite3.connect(db) as conn:
        (rowid,) = conn.execute(
            "SELECT min(item_id) FROM studyitem WHERE phase = 'test'"
            if table == "item"
            else "SELECT min(id) FROM label WHERE phase = 'test'"
        ).fetchone()
        conn.execute(f"UPDATE {table} SET {name} = '{{oops' WHERE id = ?", (rowid,))
    cli = cli_fixture.__wrapped__(str(db), monkeypatch)  # type: ignore[attr-defined]
    expected = f"error: {table} row {rowid}: {name} is not JSON"
    for args in (
        ("report", "edited", "--bootstrap", "0"),
        ("export", "edited", "--to", tmp_path / "out", "--format", "labels", "--with-text"),
        ("export", "edited", "--to", tmp_path / "out", "--format", "soft"),
        *(
            [("export", "edited", "--to", tmp_path / "out", "--format", "labels")]
            * (name == "value")
        ),
    ):
        result = cli(*args)
        assert result.code == 1, (args, result.stderr)
        assert result.stderr.startswith(expected), (args, result.stderr)
        assert "`annotate check`" in result.stderr and len(result.stderr.splitlines()) == 1


def test_duplicate_labels_are_reported(tmp_path: Path):
    """Only a store without the unique constraint can hold duplicates (one restored by another
    tool, say): rebuild SQLite's label table without it, then duplicate a label."""
    db = tmp_path / "dup.db"
    ws = open_workspace(str(db), create=True)
    rte_study(ws.engine, tmp_path, name="dup", train=2, test=3, annotators_per_item=2)
    simulate(ws.engine, "dup", annotators=2, accuracy=0.9)
    ws.engine.dispose()
    conn = sqlite3.connect(db)
    ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'label'").fetchone()[0]
    constraint = "CONSTRAINT uq_label UNIQUE (study_id, item_id, annotator_id, phase), "
    assert constraint in ddl
    columns = "study_id, item_id, annotator_id, phase, value, correct, shown_at, answered_at, flag, comment, revisions"
    conn.executescript(
        "PRAGMA foreign_keys=OFF; ALTER TABLE label RENAME TO label_old; "
        f"{ddl.replace(constraint, '')}; "
        "INSERT INTO label SELECT * FROM label_old; DROP TABLE label_old; "
        f"INSERT INTO label ({columns}) SELECT {columns} FROM label WHERE phase = 'training' LIMIT 1;"
    )
    conn.close()
    engine = open_workspace(str(db)).engine
    assert kinds(engine) == ["duplicate_label"]
    engine.dispose()


# --- backup ------------------------------------------------------------------------------------

WRITER = """
import sys
from annotate.simulate import simulate
from annotate.workspace import open_workspace
ws = open_workspace(sys.argv[1])
print("started", flush=True)
simulate(ws.engine, "live", annotators=6, accuracy=0.9, seed=1, prefix="w")
"""


def test_backup_of_a_live_store_is_consistent(tmp_path: Path):
    """SQLite only: a PostgreSQL store's backup is pg_dump's job (see the command's test)."""
    db = tmp_path / "live.db"
    ws = open_workspace(str(db), create=True)
    rte_study(ws.engine, tmp_path, name="live", train=4, test=150, annotators_per_item=3)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "started"
    copies = []

    def take_copy() -> None:
        copies.append(tmp_path / f"copy-{len(copies)}.db")
        backup_store(ws.engine, copies[-1])

    while writer.poll() is None and len(copies) < 5:  # while it writes
        take_copy()
    assert writer.wait(timeout=300) == 0
    take_copy()  # and once it is done
    counts = []
    for copy in copies:
        engine = open_workspace(str(copy)).engine
        assert check_store(engine).ok, copy  # integrity check included
        with Session(engine) as s:
            counts.append(s.scalar(text("SELECT count(*) FROM label")))
        engine.dispose()
    assert counts == sorted(counts)  # each copy is the store at one moment, later ones later
    with Session(ws.engine) as s:
        assert counts[-1] == s.scalar(text("SELECT count(*) FROM label"))
    with pytest.raises(UserError, match="exists already"):
        backup_store(ws.engine, copies[0])
    with pytest.raises(UserError, match="the store itself"):
        backup_store(ws.engine, db, overwrite=True)
    ws.engine.dispose()


def test_backup_command(cli, workspace, finished, tmp_path: Path, backend: str):
    target = tmp_path / "copy.db"
    result = cli("backup", str(target))
    if backend == "postgresql":
        assert result.code == 1 and "pg_dump" in result.stderr and not target.exists()
        return
    assert result.code == 0 and "verified" in result.stdout and target.exists()
    copy = open_workspace(str(target)).engine
    assert check_store(copy).ok
    copy.dispose()
    assert cli("backup", str(target)).code == 1
    assert cli("backup", str(target), "--overwrite").code == 0
    assert not list(tmp_path.glob(".copy.db.partial-*"))


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal", ""])
def test_a_backup_over_the_stores_own_files_is_refused_touching_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
):
    """`backup --overwrite study.db-wal` wrote the backup over the store's log (and SQLite
    then removed it with the log when the store closed): the store's -wal, -shm, -journal and
    the store itself, by any path, are refused in one line."""
    from tests.conftest import cli as cli_fixture

    db = tmp_path / "study.db"
    ws = open_workspace(str(db), create=True)
    rte_study(ws.engine, tmp_path, name="s", train=2, test=3, annotators_per_item=2)
    with ws.engine.connect() as conn:  # an open reader keeps the -wal and -shm beside the store
        conn.execute(text("SELECT count(*) FROM item")).all()
        before = {p.name: p.read_bytes() for p in tmp_path.glob("study.db*")}
        cli = cli_fixture.__wrapped__(str(db), monkeypatch)  # type: ignore[attr-defined]
        monkeypatch.chdir(tmp_path)
        result = cli("backup", "--overwrite", f"./sub/../study.db{suffix}")
        after = {p.name: p.read_bytes() for p in tmp_path.glob("study.db*")}
    ws.engine.dispose()
    assert result.code == 1
    what = f"the store's {suffix} file" if suffix else "the store itself"
    refusal = f"sub/../study.db{suffix} is {what}; choose another file for the backup"
    assert result.stderr == f"error: {refusal}\n"
    assert after == before


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a folder nobody may write (/sys)")
def test_a_backup_into_a_folder_one_may_not_write_names_the_file_asked_for(tmp_path: Path):
    """It said "cannot use /sys/.copy.db.partial-4242: Permission denied" (a hidden name the
    user never gave), and on a read-only file system the cleanup's own error replaced it."""
    ws = open_workspace(str(tmp_path / "study.db"), create=True)
    with pytest.raises(UserError) as refused:
        backup_store(ws.engine, Path("/sys/copy.db"))
    ws.engine.dispose()
    assert str(refused.value).startswith("cannot write the backup /sys/copy.db: "), refused.value
    assert ".partial" not in str(refused.value)


def test_stores_and_backups_are_private_and_a_killed_backups_leftover_goes(
    cli, tmp_path: Path, monkeypatch
):
    """29.7: the store and its backup are mode 0600 whatever the umask; a `.NAME.partial-PID`
    that a killed backup left (its process gone) is removed by the next backup, not a live one's."""
    import os
    import stat
    import subprocess
    import sys

    old = os.umask(0o022)  # the usual: files readable by everyone
    try:
        store = tmp_path / "private.db"
        ws = open_workspace(f"sqlite:///{store}", create=True)
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        )
        gone = tmp_path / f".copy.db.partial-{int(dead.stdout)}"
        gone.write_bytes(b"half a copy")
        live = tmp_path / f".copy.db.partial-{os.getppid()}"  # a running process: kept
        live.write_bytes(b"in progress")
        copy = backup_store(ws.engine, tmp_path / "copy.db")
        assert stat.S_IMODE(copy.path.stat().st_mode) == 0o600
        assert not gone.exists() and live.exists()
        ws.engine.dispose()
    finally:
        os.umask(old)


def test_a_study_name_typed_another_way_is_the_same_study(workspace, tmp_path):
    """Spaces around a name and Unicode's two ways of writing an accent make no second study
    that looks like the first: the name is stored in one form and found in any."""
    from annotate.protocol.studies import load_study
    from tests.engine_helpers import rte_study

    composed, decomposed = "caf\u00e9", "cafe\u0301"
    rte_study(workspace.engine, tmp_path, name=f"{decomposed} ", train=2, test=3)
    assert load_study(workspace.engine, composed).study.name == composed
    assert load_study(workspace.engine, decomposed).study.name == composed
    with pytest.raises(UserError, match="exists already"):
        rte_study(workspace.engine, tmp_path / "again", name=composed, train=2, test=3)
