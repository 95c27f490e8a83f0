""".ci/run runs every test half even when an earlier one fails, and then fails itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _halves() -> str:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return script[script.index("failed=()") :]


def _run(tmp_path: Path, failing: str) -> subprocess.CompletedProcess[str]:
    # A stand-in venv whose python logs each pytest call and fails the one named `failing`.
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls.log"
    python = bin_dir / "python"
    python.write_text(
        f'#!/usr/bin/env bash\necho "$* PYTHONPATH=${{PYTHONPATH:-}}" >> {log}\n'
        f'[ "$*" = "{failing}" ] && exit 1\nexit 0\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\nVENV={tmp_path / 'venv'}\n{_halves()}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


def test_a_failing_fast_loop_still_runs_the_slow_half_and_fails_the_run(tmp_path):
    run = _run(tmp_path, failing="-m pytest -q -rs")  # the fast loop's arguments
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 3
    assert "slow or postgres" in calls[1]
    assert "tests/unit" in calls[2] and "tests/no_fcntl" in calls[2]
    assert run.returncode == 1
    assert run.stderr.strip() == "FAILED: fast loop"


def test_all_halves_passing_pass_the_run(tmp_path):
    run = _run(tmp_path, failing="no call has these arguments")
    assert run.returncode == 0, run.stderr
    assert "== all passed" in run.stdout
