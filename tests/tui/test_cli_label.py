"""`annotate label`: registered, fails clearly before any screen, and keeps Textual out of the
start-up of every other command."""

from __future__ import annotations

import subprocess
import sys

from tests import fixtures as fx
from tests.tui.support import QUICK_TEST, build_study, without_labels


def rte_study(engine, tmp_path) -> None:
    """Study "rte" of SuperGLUE RTE items, the quick protocol with a test phase."""
    build_study(
        engine,
        tmp_path,
        "superglue/rte",
        test=without_labels(fx.SG_RTE),
        overrides=QUICK_TEST,
        name="rte",
    )


def test_label_command_errors_before_any_screen(cli, workspace, tmp_path):
    assert cli("label", "nope", "--as", "ana").stderr.startswith("error: no study named 'nope'")
    rte_study(workspace.engine, tmp_path)
    result = cli("label", "rte", "--as", "ana")
    assert result.code == 1 and "annotate annotator add ana" in result.stderr


def test_cli_import_does_not_load_textual():
    code = "import sys, annotate.cli; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_label_says_what_was_saved_in_words_that_agree_with_the_counts(
    cli, workspace, tmp_path, monkeypatch
):
    """The line after the app closes: "1 test answer", not "1 test answers"."""
    from types import SimpleNamespace

    import annotate.tui.app
    from annotate.protocol.session import Phase, Progress

    rte_study(workspace.engine, tmp_path)
    progress = Progress(Phase.TEST, 3, 3, 3, 1, 3)
    closed = SimpleNamespace(
        run=lambda: None,
        return_code=0,
        release_failed=None,
        continued_elsewhere=False,
        dropped_answer=None,
        session=SimpleNamespace(progress=lambda: progress, more_to_come=lambda _: True),
    )
    monkeypatch.setattr(annotate.tui.app, "create_app", lambda *a, **k: closed)
    result = cli("label", "rte", "--as", "ana", "--create")
    assert result.stdout.splitlines() == [
        "ana: 3 training answers and 1 test answer saved in study 'rte'.",
        "Run the same command later to continue where you stopped.",
    ]


def quit_at_once(monkeypatch) -> list[type]:
    """`annotate label` builds the real app and Textual's Pilot drives it: q on the first
    screen. Returns the screens the app showed first (one per run)."""
    import asyncio

    import annotate.tui.app

    seen: list[type] = []
    real = annotate.tui.app.create_app

    def create_app(*args, **kwargs):
        app = real(*args, **kwargs)

        async def drive() -> None:
            async with app.run_test(size=(80, 24)) as pilot:
                await pilot.pause()
                seen.append(type(app.screen))
                await pilot.press("q")

        app.run = lambda: asyncio.run(drive())
        return app

    monkeypatch.setattr(annotate.tui.app, "create_app", create_app)
    return seen


def test_a_refused_trainee_who_quits_is_told_the_researcher_may_still_admit_him(
    cli, workspace, tmp_path, monkeypatch
):
    """The gate refused ben after his training; on the thank-you screen he presses q. The
    goodbye said there was nothing more for him to do in the study, yet the researcher may
    still admit him by hand (`gate --admit`), and then the same command leads him to the test
    items: it says so, in the words the page says after its Quit (closing.goodbye)."""
    from annotate.protocol import gate
    from annotate.protocol.session import AnnotatorSession
    from annotate.protocol.studies import load_study
    from annotate.tui.screens.guidelines import GuidelinesScreen
    from annotate.tui.screens.phases import RejectedScreen

    build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=without_labels(fx.SG_RTE),
        overrides={"training_items": 2, "gate_min_items": 2, "gate_rule": "manual"},
        name="rte",
    )
    ben = AnnotatorSession.open(workspace.engine, "rte", "ben", create_annotator=True)
    for _ in range(2):
        ben.submit(ben.next_item(), "entailment")
    gate.decide_manually(
        workspace.engine, load_study(workspace.engine, "rte"), "ben", False, reason="too fast"
    )
    seen = quit_at_once(monkeypatch)
    result = cli("label", "rte", "--as", "ben")
    assert seen == [RejectedScreen]
    assert result.code == 0 and result.stdout.splitlines() == [
        "ben: 2 training answers and 0 test answers saved in study 'rte'.",
        "There is nothing more for you to do in this study unless the researcher admits you to "
        "its test items after all; if they tell you so, run the same command later to continue.",
    ]
    assert cli("gate", "rte", "--admit", "ben", "--reason", "trained in person").code == 0
    again = cli("label", "rte", "--as", "ben")
    assert seen == [RejectedScreen, GuidelinesScreen]  # the test phase's guidelines first
    assert again.stdout.splitlines()[1:] == [
        "Run the same command later to continue where you stopped."
    ]


def test_who_quits_all_done_is_not_told_to_continue(cli, workspace, tmp_path, monkeypatch):
    """Every test item labelled: the "All done" screen, and q says nothing is left to do."""
    from annotate.protocol.session import AnnotatorSession
    from annotate.tui.screens.phases import FinishedScreen

    rte_study(workspace.engine, tmp_path)
    ana = AnnotatorSession.open(workspace.engine, "rte", "ana", create_annotator=True)
    while (item := ana.next_item()) is not None:
        ana.submit(item, "entailment")
    seen = quit_at_once(monkeypatch)
    result = cli("label", "rte", "--as", "ana")
    assert seen == [FinishedScreen]
    assert result.stdout.splitlines()[1:] == ["There is nothing more for you to do in this study."]
