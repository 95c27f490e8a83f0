"""29.1/29.2: a screen that crashes leaves a traceback without local variables and without
passwords, and `label` / `console` then exit non-zero."""

from __future__ import annotations

import gc
import secrets
import warnings

import pytest

from annotate.text import redacted
from annotate.tui.app import create_app
from tests import fixtures as fx
from tests.tui.support import QUICK_TEST, build_study, without_labels

SECRET = "tok-" + secrets.token_hex(8)  # made at run time: no source line shows it
PASSWORD = "pg-" + secrets.token_hex(8)
URL = f"postgresql+psycopg://annotate:{PASSWORD}@db.example:5432/annotate"


def test_connection_url_passwords_are_redacted():
    assert redacted(f"cannot reach {URL}") == (
        "cannot reach postgresql+psycopg://annotate:***@db.example:5432/annotate"
    )
    assert redacted("postgresql://ann:p%40ss@h/db") == "postgresql://ann:***@h/db"
    assert redacted("host=db password=hunter2 user=x") == "host=db password=*** user=x"
    assert redacted("sqlite:////tmp/store.db") == "sqlite:////tmp/store.db"


async def test_a_crash_leaves_no_locals_and_no_password_behind(workspace, tmp_path):
    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=without_labels(fx.SG_RTE),
        overrides=QUICK_TEST,
    )
    app = create_app(workspace.engine, study, "ana", create_annotator=True)

    def explode() -> None:
        typed_token = SECRET  # a local, as `_may_sign_in` had the typed token
        raise RuntimeError(f"store lost: {URL} ({len(typed_token)})")

    shown: list[str] = []
    app._print_error_renderables = lambda: shown.extend(map(str, app._exit_renderables))
    with pytest.raises(RuntimeError):
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()  # mounted first: its widgets' startup work all done
            app.call_later(explode)
            await pilot.pause()
    assert app.return_code == 1
    left = " ".join(shown)
    assert "RuntimeError" in left and "store lost" in left
    assert SECRET not in left and PASSWORD not in left  # no locals, the URL redacted
    assert "annotate:***@db.example" in left
    # Nothing the app started is left half-done: no coroutine dropped without being awaited.
    app = pilot = None  # the last references: what they held can be collected
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_label_exits_non_zero_after_a_crash(cli, workspace, tmp_path, monkeypatch):
    import annotate.tui.app as tui_app

    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=without_labels(fx.SG_RTE),
        overrides=QUICK_TEST,
    )

    class Crashed:
        return_code = 1

        def run(self) -> None:
            return None

    monkeypatch.setattr(tui_app, "create_app", lambda *a, **k: Crashed())
    assert cli("label", study, "--as", "ana", "--create").code == 1
