"""A store error's text reaches the server's log, a traceback and the crash screen: it never
carries the statement's values, which hold a crowd worker's platform id (personal data)."""

from __future__ import annotations

import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from annotate.store.models import Annotator

PID = "5f3c0ffee0ddba11c0ffee01"


def test_a_failed_write_names_no_platform_id(workspace):
    row = {"name": "w01", "platform": "prolific", "platform_id": PID}
    with workspace.engine.begin() as conn:
        conn.execute(insert(Annotator).values(row))
    with pytest.raises(IntegrityError) as failed, workspace.engine.begin() as conn:
        conn.execute(insert(Annotator).values({**row, "name": "w02"}))  # the same worker again
    assert "uq_annotator_platform_id" in str(failed.value) or "platform_id" in str(failed.value)
    assert PID not in str(failed.value)
