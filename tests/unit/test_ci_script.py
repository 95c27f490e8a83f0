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
    assert len(calls) == 4
    assert "(slow or postgres) and not serial" in calls[1] and "-n 2" in calls[1]
    assert "(slow or postgres) and serial" in calls[2] and "-n 0" in calls[2]
    assert "tests/unit" in calls[3] and "tests/no_fcntl" in calls[3]
    assert run.returncode == 1
    assert run.stderr.strip() == "FAILED: fast loop"


def test_the_slow_tests_run_alone_fail_the_run_after_every_half_ran(tmp_path):
    run = _run(tmp_path, failing="-m pytest -m (slow or postgres) and serial -n 0 -q -rs")
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 4  # the no-fcntl half still ran
    assert run.returncode == 1
    assert run.stderr.strip() == "FAILED: slow and postgres, one at a time"


def test_all_halves_passing_pass_the_run(tmp_path):
    run = _run(tmp_path, failing="no call has these arguments")
    assert run.returncode == 0, run.stderr
    assert "== all passed" in run.stdout


# --- system packages: installed only when asked, said first ---------------------------------------
def _system_packages(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """.ci/system-packages as root with a stand-in apt-get that logs its calls."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "apt.log"
    for name, body in (("apt-get", f'echo "$*" >> {log}'), ("id", "echo 0")):
        (bin_dir / name).write_text(f"#!/usr/bin/env bash\n{body}\n", encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "INSTALL_SYSTEM_DEPS")}
    run = subprocess.run(
        ["bash", str(ROOT / ".ci" / "system-packages"), "the browser tests drive it", "chromium"],
        capture_output=True,
        text=True,
        env={**base, "PATH": f"{bin_dir}:{base['PATH']}", **env},
    )
    return run, log.read_text(encoding="utf-8") if log.exists() else ""


def test_on_a_newcomers_machine_nothing_is_installed_and_the_run_says_why(tmp_path):
    run, apt = _system_packages(tmp_path)
    assert run.returncode == 0 and apt == ""
    said = run.stdout
    assert "skipped" in said and "chromium" in said and "the browser tests drive it" in said
    assert "--install-system-deps" in said


def test_in_ci_or_when_asked_it_says_what_and_why_then_installs(tmp_path):
    for env in ({"CI": "true"}, {"INSTALL_SYSTEM_DEPS": "true"}):
        run, apt = _system_packages(tmp_path, **env)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith(
            "installing the system packages chromium with apt-get: the browser tests drive it"
        )
        assert "install -y -qq chromium" in apt
        (tmp_path / "apt.log").unlink()


def test_ci_run_installs_only_through_the_asking_script():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "apt-get install" not in script  # every install goes through .ci/system-packages
    assert script.count('    .ci/system-packages "') == 3  # PostgreSQL, Chromium, strace
    assert "--install-system-deps) export INSTALL_SYSTEM_DEPS=true" in script
