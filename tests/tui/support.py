"""Helpers for the Pilot tests: build a study from small files, read what the screen shows,
read what the store holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session
from textual.pilot import Pilot
from textual.widgets import Static

from annotate import specs
from annotate.formats.importer import import_file
from annotate.protocol.studies import create_study
from annotate.store.models import Label, LabelRevision, Lease
from tests import fixtures as fx

QUICK_TEST = {
    "training_items": 0,
    "test_sample": "all",
    "annotators_per_item": 1,
}
"""A study that starts in the test phase (no training: admitted by rule at once)."""

ONE_TRAINING_ITEM = {
    "training_items": 1,
    "gate_min_items": 1,
    "gate_threshold": 0.0,
    "test_sample": 1,
    "annotators_per_item": 1,
}
"""A study of one training item (any answer admits) and one test item, for one annotator."""


def write_split(path: Path, rows: str | list[dict]) -> Path:
    if isinstance(rows, str):
        return fx.write_text(path, rows)
    return fx.write_jsonl(path, rows)


def build_study(
    engine: Engine,
    folder: Path,
    task: str,
    *,
    test: str | list[dict],
    dev: str | list[dict] | None = None,
    overrides: dict[str, Any] | None = None,
    name: str = "pilot",
) -> str:
    """Import `dev` (labelled, for training) and `test` for `task` and create a study with the
    quick protocol and `overrides`. Returns the study name."""
    spec = specs.load_task(task)
    suffix = ".tsv" if isinstance(test, str) else ".jsonl"
    folder = folder / task.replace("/", "-")
    if dev is not None:
        import_file(engine, spec, write_split(folder / f"dev{suffix}", dev), split="dev")
    import_file(engine, spec, write_split(folder / f"test{suffix}", test), split="test")
    create_study(engine, name, task, "quick", overrides=overrides or {})
    return name


def without_labels(rows: list[dict], key: str = "label", start: int = 100) -> list[dict]:
    """Test-split copies of `rows`: no gold, new ids."""
    out = []
    for n, row in enumerate(rows):
        copy = {k: v for k, v in row.items() if k != key}
        copy["idx"] = start + n
        out.append(copy)
    return out


# --- what the annotator sees -------------------------------------------------------------------
def screen_lines(app) -> list[str]:
    """The terminal lines of the current screen, as drawn (what fits in the window)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app))


def static_text(widget: Static) -> str:
    """The text of a Static after Textual processed it (markup would have been applied here),
    whole, including what is scrolled out of view."""
    return str(widget.visual)


def all_static_text(app) -> str:
    return "\n".join(static_text(w) for w in app.screen.query(Static))


async def wait_until(pilot: Pilot, condition: Callable[[], bool], what: str) -> None:
    """Let the app run (timers fire) until `condition` holds; bounded, so a bug fails fast."""
    for _ in range(250):
        if condition():
            await pilot.pause()  # let a screen that just arrived finish mounting
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def settle(pilot: Pilot) -> None:
    """Wait until the screen stands still: no scroll under way or just ended (a focus change
    scrolls its container smoothly), and no animation running or scheduled."""

    def still() -> bool:
        return not any(w.is_scrolling for w in pilot.app.screen.query("*"))

    await wait_until(pilot, still, "the screen to stop scrolling")
    await pilot.wait_for_scheduled_animations()
    await wait_until(pilot, still, "the screen to stop scrolling")


async def start(pilot: Pilot) -> None:
    """Leave the guidelines screen."""
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()


# --- what the store holds ------------------------------------------------------------------
def labels(engine: Engine, phase: str | None = None) -> list[Label]:
    with Session(engine) as session:
        query = select(Label).order_by(Label.id)
        if phase is not None:
            query = query.where(Label.phase == phase)
        return list(session.scalars(query))


def revisions(engine: Engine) -> list[LabelRevision]:
    with Session(engine) as session:
        return list(session.scalars(select(LabelRevision).order_by(LabelRevision.id)))


def leases(engine: Engine) -> int:
    """Items reserved for someone's screen right now."""
    with Session(engine) as session:
        return len(session.scalars(select(Lease)).all())
