"""The README and the docs' pages (guide, recipes, configuration) are a contract: their shell
blocks run, here.

How a page marks its blocks (skip with the test that covers them, expected output, hidden
setup, transcripts) is described in tests/readme_runner.py and in docs/architecture.md
("Executable documentation"). In short, before a ```bash block:

    <!-- readme: skip REASON; covered by tests/PATH.py -->
    <!-- readme: output TEXT -->
    <!-- readme: exit N -->

and a hidden setup block: a comment that starts with `<!-- readme: setup` and ends with a
`-->` line. Also here: every command of `annotate --help` (and of its groups) is named in a
page and run by some page, and the Configuration page lists every ANNOTATE_* variable the
code reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from annotate import settings as settings_module
from annotate.cli import app
from tests.readme_runner import ROOT, commands_named, parse, run_page, skip_target

README = ROOT / "README.md"
DOCS = ROOT / "docs"
RECIPES = sorted((DOCS / "recipes").glob("*.md"))
GUIDE = [DOCS / "getting-started.md", *sorted((DOCS / "guide").glob("*.md"))]
PAGES = [README, *GUIDE, *RECIPES, DOCS / "configuration.md", DOCS / "report-schema.md"]
CONFIGURATION = DOCS / "configuration.md"
GLOBAL_OPTIONS = re.compile(
    r"^annotate(\s+--(db|config)(\s+|=)\S+|\s+--debug|\s+--width(\s+|=)\d+)*"
)


def command_paths() -> list[str]:
    """Every command of the app: `init`, `study create`, `curate author` …"""

    def walk(command, prefix):
        for name, sub in getattr(command, "commands", {}).items():
            path = [*prefix, name]
            if getattr(sub, "commands", None):
                yield from walk(sub, path)
            else:
                yield " ".join(path)

    return sorted(walk(typer.main.get_command(app), []))


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_the_page_runs(page: Path, tmp_path: Path):
    run_page(page, tmp_path)


def _normalised(command: str) -> str:
    return GLOBAL_OPTIONS.sub("annotate", command)


def _exercised() -> tuple[set[str], dict[str, Path]]:
    """Commands run by some page, and commands shown only in skipped blocks with the test file
    the skip names."""
    run: set[str] = set()
    skipped: dict[str, Path] = {}
    for page in PAGES:
        for block in parse(page):
            named = {_normalised(c) for c in commands_named([block])}
            if block.skip is None:
                run |= named
            else:
                target = skip_target(block.skip)
                for command in named:
                    if target is not None:
                        skipped[command] = target
    return run, skipped


def _starts(command_line: str, path: str) -> bool:
    words = command_line.split()
    return words[1 : 1 + len(path.split())] == path.split()


def test_every_command_is_named_in_the_docs():
    """Beside the generated reference, some page tells what each command is for."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    missing = []
    for path in command_paths():
        *group, name = path.split()
        if f"annotate {path}" in text:
            continue
        # a group's commands may be listed by name in its section: "`create`, `edit` …"
        if group and f"annotate {' '.join(group)}" in text and f"`{name}`" in text:
            continue
        missing.append(path)
    assert not missing, f"commands of `annotate --help` no page mentions: {missing}"


def test_every_command_is_run_by_a_page_or_by_the_test_its_skip_names():
    run, skipped = _exercised()
    missing = []
    for path in command_paths():
        if any(_starts(c, path) for c in run):
            continue
        covering = [t for c, t in skipped.items() if _starts(c, path)]
        name = path.split()[-1]
        if any(name in t.read_text(encoding="utf-8") for t in covering if t.exists()):
            continue
        missing.append(path)
    assert not missing, f"commands no page runs (nor a test its skip marker names): {missing}"


def test_the_runner_reads_its_markers(tmp_path: Path):
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n<!-- readme: setup\nprintf 'hi\\n' > hello.txt\n-->\n\n"
        "<!-- readme: output hi -->\n```bash\ncat hello.txt\n```\n\n"
        "<!-- readme: skip a screen; covered by tests/test_readme.py -->\n"
        "```bash\nannotate label x --as y\n```\n\n"
        "<!-- readme: exit 3 -->\n```bash\nexit 3\n```\n\n"
        "```\n$ printf 'a b\\nc\\n'\na …\nc\n```\n"
    )
    blocks = parse(page)
    assert [b.kind for b in blocks] == ["setup", "bash", "bash", "bash", "transcript"]
    assert blocks[1].outputs == ["hi"] and blocks[2].skip and blocks[3].exit_code == 3
    (tmp_path / "run").mkdir()
    run_page(page, tmp_path / "run")
    page.write_text(page.read_text().replace("output hi", "output bye"))
    (tmp_path / "run2").mkdir()
    with pytest.raises(AssertionError, match="output lacks 'bye'"):
        run_page(page, tmp_path / "run2")


def test_every_environment_variable_is_a_setting_and_listed_in_the_docs():
    names = set()
    for path in (ROOT / "annotate").rglob("*.py"):
        names |= set(re.findall(r"\bANNOTATE_[A-Z][A-Z_]*[A-Z]\b", path.read_text("utf-8")))
    documented = settings_module.documented()
    assert names <= set(documented), f"not in annotate/settings.py: {names - set(documented)}"
    assert all(documented.values()), "every setting has a docstring"
    text = CONFIGURATION.read_text(encoding="utf-8")
    table = text.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(ANNOTATE_[A-Z_]+)`", table, flags=re.MULTILINE))
    assert listed == set(documented), (
        f"the Configuration page lists {sorted(listed)}, the settings are {sorted(documented)}"
    )
    # the table is the settings' docstrings, in the model's order
    rows = re.findall(r"^\| `(ANNOTATE_[A-Z_]+)` \| (.*) \|$", table, flags=re.MULTILINE)
    assert rows == list(documented.items())


def test_the_docs_show_the_example_task_file_as_it_is():
    text = (DOCS / "guide" / "protocols.md").read_text(encoding="utf-8")
    shown = text.split("A minimal one, `examples/toy/toy.toml`:", 1)[1]
    shown = shown.split("```toml\n", 1)[1].split("```", 1)[0]
    assert shown == (ROOT / "examples" / "toy" / "toy.toml").read_text(encoding="utf-8")
