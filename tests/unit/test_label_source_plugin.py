"""Label sources from other packages (the entry-point group `annotate.label_sources`), and the
recipe docs/recipes/own-platform.md that writes one.

The fast tests register the example package's source (examples/label_source_plugin) by
standing in for the installed entry points; the slow one installs the package with pip and
runs the recipe's commands as a reader would."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import annotate
from annotate.formats.label_sources import LabelSource, Peek, registry
from tests.readme_runner import ROOT, parse, scratch

PAGE = ROOT / "docs" / "recipes" / "own-platform.md"
PLUGIN = ROOT / "examples" / "label_source_plugin"
VALUES = "entailment=yes,not_entailment=no"
QUILLBOARD = ("quillboard", "annotate_quillboard:QuillboardSource", "annotate-quillboard")


class GreedySource(LabelSource):
    """A careless third party's source: claims every file, and fails to read any."""

    name = "greedy"
    description = "anything at all"

    def claims(self, peek: Peek) -> bool:
        return True

    def read(self, path, options):
        raise KeyError("column")


@pytest.fixture
def plugins(monkeypatch):
    """Stand in for the installed entry points: `plugins(("name", "module:Class", "pkg"), …)`."""
    monkeypatch.syspath_prepend(str(PLUGIN / "src"))

    def install(*points: tuple[str, str, str]) -> None:
        monkeypatch.setattr(registry, "plugin_entry_points", lambda: sorted(points))

    return install


@pytest.fixture
def cards(cli):
    assert cli("import", "superglue/rte", PLUGIN / "cards.jsonl", "--split", "dev").code == 0


def test_an_installed_source_s_file_is_recognised_and_imported(cli, cards, plugins):
    plugins(QUILLBOARD)
    result = cli(
        "import-labels",
        PLUGIN / "pilot.quill",
        "--dataset",
        "1",
        "--study",
        "q",
        "--values",
        VALUES,
    )
    assert result.code == 0, result.stderr
    assert "collected outside annotate: Quillboard export, 3 reviewers, gate unknown" in (
        result.stdout
    )
    report = cli("report", "q", "--format", "json", "--bootstrap", "0").json()
    assert report["n_labels"] == 9 and report["n_items"] == 3
    assert [a["name"] for a in report["annotators"]] == ["w01", "w02", "w03"]
    assert report["datasheet"]["time_on_task"]["total_minutes"] == pytest.approx(137 / 60)


def test_without_the_package_the_file_is_a_long_file_and_the_format_unknown(cli, cards):
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1")
    assert result.code == 1 and "pilot.quill:2: row has 2 fields" in result.stderr
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1", "--format", "quill")
    assert result.code == 2
    assert (
        "'quill' is not one of 'long', 'mturk', 'qualtrics', 'potato', 'labelstudio'"
        in result.stderr
    )


def test_format_accepts_and_lists_an_installed_source(cli, cards, plugins):
    plugins(QUILLBOARD)
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1", "--format", "quill")
    assert result.code == 2 and "'labelstudio', 'quillboard'." in result.stderr
    result = cli(
        "import-labels",
        *(PLUGIN / "pilot.quill", "--dataset", "1", "--format", "quillboard", "--values", VALUES),
    )
    assert result.code == 0, result.stderr


def test_a_source_that_cannot_be_loaded_is_named_without_a_traceback(cli, cards, plugins):
    plugins(("broken", "annotate_nowhere:Source", "annotate-broken"))
    assert "broken" in registry.names()  # listed without being loaded
    result = cli("import-labels", PLUGIN / "cards.jsonl", "--dataset", "1")
    assert result.code == 1 and "Traceback" not in result.stderr
    assert (
        "label source 'broken' from package annotate-broken (annotate_nowhere:Source) cannot be "
        "loaded: ModuleNotFoundError" in result.stderr
    )
    plugins(("elsewhere", "annotate_quillboard:QuillboardSource", "annotate-quillboard"))
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1")
    assert result.code == 1 and "calls itself 'quillboard': the names must agree" in result.stderr


def test_two_sources_that_claim_one_file_ask_for_format(cli, cards, plugins, tmp_path):
    plugins(QUILLBOARD, ("greedy", f"{__name__}:GreedySource", "annotate-greedy"))
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1", "--values", VALUES)
    assert result.code == 1
    assert (
        "more than one format reads this file: greedy (anything at all), quillboard "
        "(Quillboard export); pass --format NAME" in result.stderr
    )
    result = cli(
        "import-labels",
        *(PLUGIN / "pilot.quill", "--dataset", "1", "--format", "quillboard", "--values", VALUES),
    )
    assert result.code == 0, result.stderr
    result = cli("import-labels", PLUGIN / "cards.jsonl", "--dataset", "1", "--format", "greedy")
    assert result.code == 1 and "Traceback" not in result.stderr
    assert (
        "label source 'greedy' from package annotate-greedy "
        f"({__name__}:GreedySource) failed in read() on" in result.stderr
    )
    assert "KeyError: 'column'" in result.stderr


def test_a_package_may_not_take_a_built_in_name(cli, cards, plugins):
    plugins(("mturk", "annotate_quillboard:QuillboardSource", "annotate-mturk2"))
    assert registry.names().count("mturk") == 1
    result = cli("import-labels", PLUGIN / "pilot.quill", "--dataset", "1", "--format", "mturk")
    assert result.code == 1
    assert "'mturk' is registered twice, by annotate (built in) and annotate-mturk2" in (
        result.stderr
    )


def test_the_recipe_shows_the_example_package_s_own_files():
    text = PAGE.read_text(encoding="utf-8")
    module = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert module == (PLUGIN / "src" / "annotate_quillboard" / "__init__.py").read_text()
    toml = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    assert toml in (PLUGIN / "pyproject.toml").read_text()
    shown = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    assert (PLUGIN / "pilot.quill").read_text().startswith(shown)


@pytest.mark.slow
def test_the_recipe_installs_the_example_package_and_imports_its_file(tmp_path):
    """Every bash block of the recipe, in order, with its `pip install` run for real (into a
    folder on PYTHONPATH, offline: hatchling from this environment builds the wheel)."""
    env = scratch(tmp_path)
    site = tmp_path / "site-packages"
    env["PYTHONPATH"] = f"{site}{os.pathsep}{ROOT}"
    pip = f'"{sys.executable}" -m pip install -q --no-deps --no-build-isolation --target "{site}"'
    outputs = []
    for block in (b for b in parse(PAGE) if b.kind == "bash"):
        script = re.sub(r"^pip install ", f"{pip} ", block.text, flags=re.M)
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (block.text, done.stdout, done.stderr)
        outputs.append(done.stdout + done.stderr)
    assert (site / "annotate_quillboard").is_dir()
    printed = "\n".join(outputs)
    assert "<long|mturk|qualtrics|potato|labelstudio|quillboard>" in printed  # --help
    assert "collected outside annotate: Quillboard export, 3 reviewers, gate unknown" in printed
    with annotate.open_store(f"sqlite:///{tmp_path / 'annotate.db'}") as store:
        labels = store.study("rte-quill").labels()
    assert len(labels) == 9
    assert sorted(labels["value"].value_counts().items()) == [
        ("entailment", 6),
        ("not_entailment", 3),
    ]
