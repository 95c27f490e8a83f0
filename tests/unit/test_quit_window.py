"""A window left by Quit is over (the engine's rule behind the page's "Quit ends the session"):
it is `was_quit`, and nothing more is stored through it; a new window works as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.windows import ContinuedElsewhere
from tests.engine_helpers import rte_study


def test_a_quit_window_stores_nothing_and_a_new_one_does(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, train=2, test=3, gate_threshold=0.0)
    name = ctx.study.name
    s = AnnotatorSession.open(workspace.engine, name, "ana", create_annotator=True)
    s.claim_window("page")
    while s.phase() is Phase.TRAINING:
        s.submit(s.next_item(), "entailment")
    item = s.next_item()
    assert not s.was_quit()
    s.release()  # Quit
    assert s.was_quit()
    with pytest.raises(ContinuedElsewhere):  # a replayed copy of the page's cookie
        s.submit_and_next(item, "entailment")
    again = AnnotatorSession.open(workspace.engine, name, "ana")
    again.claim_window("page")  # signing in again: a new window
    assert not again.was_quit()
    assert again.submit_and_next(again.next_item(), "entailment") is not None
