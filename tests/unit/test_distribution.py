"""The package as a researcher installs and cites it: its name on the package index, the
install hints that name it, the licence, the citation and the changelog."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import annotate
from annotate import install_hint
from annotate.store import schema

ROOT = Path(__file__).resolve().parents[2]
OLD_HINTS = re.compile(r"pip install (?:-\w+ )*'?annotate(?:\[|(?![\w-]))")
"""An install of the index's `annotate` (an unrelated project): `pip install 'annotate[web]'`,
`pip install annotate`; `pip install 'annotate-baselines[web]'` is ours."""


def _texts() -> list[tuple[Path, str]]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "annotate").rglob("*.py"))]
    return [(f, f.read_text(encoding="utf-8")) for f in files]


def test_no_hint_installs_the_unrelated_annotate_package():
    found = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}: {m.group(0)}"
        for path, text in _texts()
        for m in OLD_HINTS.finditer(text)
    ]
    assert found == []


def test_the_pattern_catches_the_old_hints_and_spares_the_new_ones():
    assert OLD_HINTS.search("pip install 'annotate[report]'")
    assert OLD_HINTS.search("then pip install annotate.")
    assert OLD_HINTS.search("pip install -U annotate")
    assert not OLD_HINTS.search("pip install 'annotate-baselines[report]'")
    assert not OLD_HINTS.search("pip install annotate-baselines")


def test_hints_name_the_distribution_with_its_extra():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    assert project["name"] == annotate.DISTRIBUTION == "annotate-baselines"
    assert project["scripts"] == {"annotate": "annotate.cli:main"}
    for extra in ("report", "aggregation", "web", "postgres"):
        assert extra in project["optional-dependencies"]
    assert install_hint("web") == "pip install 'annotate-baselines[web]'"
    assert project["classifiers"]  # no project URL until the project has a public address
    tested = f"Programming Language :: Python :: {project['requires-python'].lstrip('>=')}"
    assert tested in project["classifiers"]


def test_licence_and_citation_match_the_release():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert f'version: "{annotate.__version__}"' in citation
    assert "license: MIT" in citation


def test_the_changelog_has_every_release_and_its_store_schema():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert releases[0] == annotate.__version__  # newest first
    assert set(schema.SCHEMA_RELEASES.values()) <= set(releases)
    for release in releases:
        body = changelog.split(f"## [{release}]", 1)[1].split("\n## ", 1)[0]
        assert "Store schema" in body, release
