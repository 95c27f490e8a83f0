"""A non-editable install (a built wheel) finds the built-in tasks, protocols and demo data; the
wheel and the sdist carry the licence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import annotate

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_tasks_protocols_and_demo_data(tmp_path: Path):
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = (tmp_path / "dist").glob("annotate_baselines-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    (licence,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert b"MIT License" in zipfile.ZipFile(wheel).read(licence)
    assert "annotate/builtin/tasks/superglue/rte.toml" in names
    assert "annotate/builtin/protocols/superglue-2019.toml" in names
    assert "annotate/demo_data/rte/test.jsonl" in names
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    # The installed copy (not the source tree) answers: run from a folder outside the checkout.
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = "import annotate, json, sys; from annotate import specs; print(json.dumps([annotate.__file__, len(specs.all_tasks()), [p.name for p in specs.all_protocols()]]))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    location, n_tasks, protocols = json.loads(out.stdout)
    assert location.startswith(str(target))
    assert n_tasks == 21 and {"superglue-2019", "glue-2019", "quick"} <= set(protocols)


def test_sdist_ships_the_licence_changelog_and_citation(tmp_path: Path):
    # The build backend (hatchling) into a folder of its own: no build tool in the dev extra.
    backend = tmp_path / "backend"
    got = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--target", str(backend), "hatchling"],
        capture_output=True,
        text=True,
    )
    assert got.returncode == 0, got.stderr
    build = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", str(tmp_path / "dist")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(backend)},
    )
    assert build.returncode == 0, build.stderr
    (sdist,) = (tmp_path / "dist").glob("annotate_baselines-*.tar.gz")
    import tarfile

    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"LICENSE", "CHANGELOG.md", "CITATION.cff", "pyproject.toml"} <= names


def test_a_fresh_venv_installs_the_wheel_by_its_name_with_an_extra(tmp_path: Path):
    """`pip install 'annotate-baselines[report]'` from the local wheel, in a fresh virtual
    environment: the extra resolves (no "does not provide the extra" warning) and the venv's
    own `annotate` command answers --version. The dependencies come from this environment's
    site-packages (a path line in a .pth file: its own .pth files, such as the editable
    install's, are not run), so nothing is downloaded."""
    import site
    import sysconfig
    import venv

    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()] or [
        sysconfig.get_paths()["purelib"]
    ]
    (Path(fresh_site) / "deps-from-the-test-env.pth").write_text("\n".join(ours) + "\n")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    no_index = ["--no-index", "--find-links", str(dist)]
    first = subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--force-reinstall", *no_index, "annotate-baselines"],
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stderr
    extra = subprocess.run(
        [*pip, "install", *no_index, "annotate-baselines[report]"],
        capture_output=True,
        text=True,
    )
    assert extra.returncode == 0, extra.stderr
    assert "does not provide the extra" not in extra.stdout + extra.stderr
    version = subprocess.run(
        [str(env_dir / "bin" / "annotate"), "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith(f"annotate {annotate.__version__} "), version.stdout
    where = subprocess.run(
        [str(python), "-c", "import annotate; print(annotate.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    assert where.startswith(fresh_site), where  # the wheel's copy, not the checkout
