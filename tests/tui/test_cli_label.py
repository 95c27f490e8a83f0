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
        session=SimpleNamespace(progress=lambda: progress),
    )
    monkeypatch.setattr(annotate.tui.app, "create_app", lambda *a, **k: closed)
    result = cli("label", "rte", "--as", "ana", "--create")
    assert "ana: 3 training answers and 1 test answer saved in study 'rte'." in result.stdout
