"""The documentation site: the command reference is generated from the app (so it cannot
drift from --help), the nav lists every page, and the examples are the files the pages use."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from tests.readme_runner import ROOT
from tests.test_readme import command_paths

DOCS = ROOT / "docs"


def _reference_hook():
    spec = importlib.util.spec_from_file_location("reference_hook", DOCS / "hooks" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_has_every_command_with_its_help():
    hook = _reference_hook()
    text = hook.markdown()
    for path in command_paths():
        assert f"## `annotate {path}`" in text, path
    # the help text itself, as `--help` prints it, and every option as a row of a table
    assert "annotate curate edit diag 3 --as lea" in text
    agreement = text.split("## `annotate agreement`", 1)[1].split("\n## ", 1)[0]
    assert (
        "| `--level <nominal|ordinal|interval|ratio>` | nominal, ordinal, interval or ratio [default: nominal] |"
        in agreement
    )
    assert "| `file <path>` |" in agreement.split("**Options**")[0]  # the argument's own table
    assert hook.MARKER in (DOCS / "reference.md").read_text(encoding="utf-8")


def test_the_nav_lists_every_page():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*(\S+\.md)\s*$", nav, flags=re.MULTILINE))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    # Every page is in the nav (`mkdocs build --strict` fails on one left out, too).
    assert listed == pages
    assert {
        f"recipes/{name}.md" for name in ("ssh-lab", "pandas", "compare-model", "curate", "upgrade")
    } <= listed


def test_the_docs_do_not_point_at_internal_notes():
    """Neither the docs nor the code send a reader to notes that are not in the project."""
    sources = [*(ROOT / "annotate").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    for page in [*DOCS.rglob("*.md"), ROOT / "README.md", *sources]:
        text = page.read_text(encoding="utf-8")
        for note in ("DESIGN.md", "PROTOCOL.md", "FORMATS.md", "shared/DESIGN", "shared/PROTOCOL"):
            assert note not in text, (page, note)


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "reference" / "index.html").exists()


def test_the_example_protocol_is_the_superglue_one_with_its_three_changes():
    from annotate.specs import load_protocol

    ours = load_protocol(str(ROOT / "examples" / "protocols" / "lab-2026.toml")).model_dump()
    paper = load_protocol("superglue-2019").model_dump()
    changed = {k for k in paper if k in ours and ours[k] != paper[k]}
    assert {"test_sample", "tie_rule", "catch_rate"} <= changed
    assert changed - {"test_sample", "tie_rule", "catch_rate"} <= {
        "name",
        "description",
        "source",
        "seed",
        "assumptions",
        "task_overrides",
    }


def test_the_example_model_answers_every_demo_rte_test_item():
    import json

    from annotate import specs
    from annotate.scoring.predictions import read_predictions

    folder = ROOT / "examples" / "models" / "roberta"
    predictions = read_predictions(folder / "RTE.jsonl", specs.load_task("superglue/rte"))
    demo = ROOT / "annotate" / "demo_data" / "rte" / "test.jsonl"
    ids = {str(json.loads(line)["idx"]) for line in demo.read_text().splitlines()}
    assert {str(i) for i in predictions.predictions} == ids


def test_the_crowd_toml_reference_names_every_key():
    from annotate.protocol.crowd_config import OUTCOMES, CrowdConfig, SurveyQuestion

    page = (ROOT / "docs" / "reference" / "crowd-toml.md").read_text(encoding="utf-8")
    keys = [*CrowdConfig.model_fields, *SurveyQuestion.model_fields, *OUTCOMES]
    missing = [k for k in keys if f"`{k}`" not in page and f"`[{k}]`" not in page]
    missing = [k for k in missing if f"`[[{k}]]`" not in page]
    assert not missing, missing
