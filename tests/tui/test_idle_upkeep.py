"""While the annotator reads, the app lets the store do what the keypress left: SQLite's log
checkpoint (annotate/store/checkpoint.py), which would otherwise make one keypress in a
hundred wait for the store file's fsync."""

from __future__ import annotations

from pathlib import Path

import pytest

import annotate.tui.app as label_app_module
from annotate.store import engine as engine_module
from annotate.tui.app import LabelApp, create_app
from annotate.tui.screens.item import ItemScreen
from annotate.workspace import open_workspace
from tests.tui.support import QUICK_TEST, build_study, start, wait_until

ROWS = [{"premise": f"The quay had {n} boats.", "hypothesis": "Boats.", "idx": n} for n in range(5)]


class Clock:
    """The app's clock, moved by the test: how long the annotator has been reading."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_the_store_file_catches_up_while_the_annotator_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Every ordinary commit checkpoints (wal_autocheckpoint=1): a changed store file after the
    # keypress is the app's doing.
    pragmas = (*engine_module.SQLITE_PRAGMAS, "PRAGMA wal_autocheckpoint=1")
    monkeypatch.setattr(engine_module, "SQLITE_PRAGMAS", pragmas)
    clock = Clock()
    monkeypatch.setattr(label_app_module, "time", clock)
    monkeypatch.setattr(LabelApp, "IDLE_S", 0.05)
    path = tmp_path / "store.db"
    engine = open_workspace(str(path), create=True).engine
    study = build_study(engine, tmp_path, "superglue/rte", test=ROWS, overrides=QUICK_TEST)
    app = create_app(engine, study, "ana", create_annotator=True)
    async with app.run_test() as pilot:
        await start(pilot)
        screen = app.screen
        assert isinstance(screen, ItemScreen)
        first = screen.item.item_id
        await pilot.press("1")
        await wait_until(pilot, lambda: screen.item.item_id != first, "the next item")
        before = path.read_bytes()  # the answer is committed, in the log
        clock.now += 1.0  # the annotator reads the new item for a second
        await wait_until(pilot, lambda: path.read_bytes() != before, "the checkpoint")
    engine.dispose()
