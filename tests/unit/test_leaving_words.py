"""The last words to an annotator who leaves (`annotate label`, a served terminal tab): their
counts are read from the store as they quit, and a store gone by then does not keep them
from leaving."""

from __future__ import annotations

import shutil
from pathlib import Path

from annotate.presentation.closing import words_on_leaving
from annotate.protocol.session import AnnotatorSession
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

COME_BACK = "open this page again later"


def test_the_words_count_what_was_saved(tmp_path: Path):
    ws = open_workspace(str(tmp_path / "study.db"), create=True)
    rte_study(ws.engine, tmp_path, name="s", train=3, test=3)
    session = AnnotatorSession.open(ws.engine, "s", "ana", create_annotator=True)
    session.submit(session.next_item(), "entailment")
    words = words_on_leaving("ana", session, "s", COME_BACK)
    ws.engine.dispose()
    assert words == [
        "ana: 1 training answer and 0 test answers saved in study 's'.",
        "Open this page again later to continue where you stopped.",
    ]


def test_a_store_gone_as_the_annotator_quits_still_says_goodbye(tmp_path: Path):
    """The tab's goodbye read the store as the tab closed: a store unreachable then failed the
    app's exit with the store's error. Its folder is removed here, its connections closed."""
    folder = tmp_path / "store"
    folder.mkdir()
    ws = open_workspace(str(folder / "study.db"), create=True)
    rte_study(ws.engine, tmp_path, name="s", train=3, test=3)
    session = AnnotatorSession.open(ws.engine, "s", "ana", create_annotator=True)
    session.submit(session.next_item(), "entailment")
    session.progress()  # the status line's, after the answer: the next one reads the store
    ws.engine.dispose()
    shutil.rmtree(folder)
    words = words_on_leaving("ana", session, "s", COME_BACK)
    ws.engine.dispose()
    assert words == [
        "ana: every answer you gave was saved in study 's' as you gave it.",
        "Open this page again later to continue where you stopped.",
    ]
