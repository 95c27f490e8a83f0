"""A server process measures how fast the disk under its SQLite store syncs, and groups its
answers' commits (several store threads) only where a sync is slow; where it is quick, its
event loop does the store's work, with no thread (store/sync_speed.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from annotate.store.engine import make_engine
from annotate.store.sync_speed import (
    GROUPING_THREADS,
    ON_THE_LOOP,
    SLOW_SYNC_S,
    store_threads,
    sync_seconds,
)
from bench.bench_web import slowed as slowed_by
from tests.engine_helpers import disk_syncing_in


def test_the_measurement_syncs_a_scratch_file_beside_the_store_and_leaves_nothing(tmp_path):
    seconds = sync_seconds(tmp_path)
    assert 0 < seconds < 5
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("sync_s", "threads"),
    [
        (0.0002, ON_THE_LOOP),
        (SLOW_SYNC_S * 0.9, ON_THE_LOOP),
        (SLOW_SYNC_S * 1.1, GROUPING_THREADS),
        (0.03, GROUPING_THREADS),
    ],
)
def test_answers_share_commits_only_where_the_disk_syncs_slowly(
    tmp_path, monkeypatch, sync_s, threads
):
    disk_syncing_in(monkeypatch, sync_s)
    assert store_threads(make_engine(f"sqlite:///{tmp_path / 'store.db'}")) == threads


def test_a_store_that_cannot_be_measured_is_served_by_one_thread(tmp_path, monkeypatch):
    disk_syncing_in(monkeypatch, 0.01)
    assert store_threads(make_engine("sqlite://")) == 1  # in memory
    missing = tmp_path / "gone" / "store.db"  # no folder to sync in: no error either
    assert store_threads(make_engine(f"sqlite:///{missing}")) == 1


@pytest.mark.skipif(
    shutil.which("strace") is None, reason="needs strace (.ci/run installs it where it may)"
)
def test_a_disk_slowed_for_real_is_found_slow(tmp_path):
    """Every sync of a process held 2 ms by strace's fault injection (as bench_web
    --sync-delay-ms runs the page): the process measures a slow disk and groups."""
    code = (
        "from annotate.store.engine import make_engine\n"
        "from annotate.store.sync_speed import store_threads\n"
        f"print(store_threads(make_engine('sqlite:///{tmp_path / 'store.db'}')))\n"
    )
    command = [sys.executable, "-c", code]
    slowed = subprocess.run(slowed_by(command, 2.0), capture_output=True, text=True)
    if slowed.returncode != 0 and slowed.stderr.startswith("strace:"):
        pytest.skip(f"strace cannot trace here: {slowed.stderr.strip()}")  # (no ptrace)
    assert slowed.stdout.split() == [str(GROUPING_THREADS)], slowed.stderr
