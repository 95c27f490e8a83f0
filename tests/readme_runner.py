"""Run the shell examples of a Markdown page (the README, the docs' recipes) as a reader would.

The convention (also described in docs/architecture.md, "Executable documentation"):

* Every fenced block whose language is ``bash`` is run, in page order, in one scratch folder
  per page (so a block may use what an earlier block made: the store, an export folder). Each
  block runs with ``bash -e -o pipefail``: it fails on the first command that fails.
* A block is preceded (blank lines allowed) by zero or more marker comments::

      <!-- readme: skip REASON; covered by tests/PATH.py -->   not run here (a screen, a
          server, an install); the named test file must exist and exercise the commands.
      <!-- readme: output TEXT -->    the block's output (stdout + stderr, runs of whitespace
          made one space) must contain TEXT; repeat the marker for several texts.
      <!-- readme: exit N -->         the block's last command must exit with status N.

* A hidden block, run where it stands and not shown to readers, prepares what the page's
  commands assume (a file to import, an old store)::

      <!-- readme: setup
      printf 'item,annotator,label\\n' > labels.csv
      -->

* A fenced block without a language whose first line starts with ``$ `` is a transcript: each
  ``$ `` line is run and its output must equal the lines under it (``…`` stands for any text
  within a line). Its exit status is not checked (transcripts usually quote an error).
* ``pip install`` lines are not run: the extras they name must exist in pyproject.toml.

The scratch folder holds ``examples/`` (a copy of the repository's), and ``$HOME`` points into
it with the demo data where the README's paths expect real data: ``~/data/RTE`` (SuperGLUE
RTE: val.jsonl, test.jsonl with gold) and ``~/glue_data/SST-2`` (dev.tsv, test.tsv).
``$README_REPO`` is the repository root and ``$README_DEMO`` the demo data folder, for setup
blocks. ``annotate`` on PATH runs this checkout (``python -m annotate``). The store is the
default ``annotate.db`` in the scratch folder: ``ANNOTATE_DB`` is unset.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "annotate" / "demo_data"

_MARKER = re.compile(r"^<!--\s*readme:\s*(\w+)\s*(.*?)\s*(-->)?\s*$")
_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_PIP = re.compile(r"^\s*pip install\b(.*)$")


@dataclass
class Block:
    """One runnable piece of a page: a ```bash block, a hidden setup or a transcript."""

    kind: str  # "bash", "setup" or "transcript"
    text: str
    line: int  # 1-based line of the block's first line in the page
    skip: str | None = None
    outputs: list[str] = field(default_factory=list)
    exit_code: int = 0

    def commands(self) -> list[str]:
        """The block's commands, continuation lines joined, comments and blanks left out."""
        if self.kind == "transcript":
            return [line[2:] for line in self.text.splitlines() if line.startswith("$ ")]
        joined = self.text.replace("\\\n", " ")
        return [
            line.strip()
            for line in joined.splitlines()
            if line.strip() and not line.strip().startswith("#")
        ]


def parse(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending: dict = {"skip": None, "outputs": [], "exit_code": 0}
    i = 0
    while i < len(lines):
        line = lines[i]
        marker = _MARKER.match(line.strip())
        if marker:
            name, arg, closed = marker.groups()
            if name == "setup":
                body, i = _until_comment_end(lines, i + 1)
                blocks.append(Block("setup", "\n".join(body), i))
            elif name == "skip":
                pending["skip"] = arg
            elif name == "output":
                pending["outputs"].append(arg)
            elif name == "exit":
                pending["exit_code"] = int(arg)
            else:
                raise ValueError(f"{page.name}:{i + 1}: unknown readme marker {name!r}")
            if name != "setup" and not closed:
                raise ValueError(f"{page.name}:{i + 1}: a readme marker must fit on one line")
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            indent, lang = fence.groups()
            body, end = _until_fence(lines, i + 1, indent)
            text = "\n".join(body)
            if lang == "bash":
                blocks.append(Block("bash", text, i + 2, **pending))
            elif lang in ("", "console") and body and body[0].startswith("$ "):
                blocks.append(Block("transcript", text, i + 2, **pending))
            pending = {"skip": None, "outputs": [], "exit_code": 0}
            i = end + 1
            continue
        if line.strip():  # prose between a marker and its block: the marker is dropped
            pending = {"skip": None, "outputs": [], "exit_code": 0}
        i += 1
    return blocks


def _until_comment_end(lines: list[str], start: int) -> tuple[list[str], int]:
    for j in range(start, len(lines)):
        if lines[j].strip() == "-->":
            return lines[start:j], j
    raise ValueError(f"line {start}: a readme setup comment is not closed by a '-->' line")


def _until_fence(lines: list[str], start: int, indent: str) -> tuple[list[str], int]:
    for j in range(start, len(lines)):
        if lines[j].strip() == "```":
            return [line.removeprefix(indent) for line in lines[start:j]], j
    raise ValueError(f"line {start}: a fenced block is not closed")


def skip_target(reason: str) -> Path | None:
    """The test file a skip marker names (``covered by tests/….py``)."""
    found = re.search(r"covered by (tests/\S+\.py)", reason)
    return ROOT / found.group(1) if found else None


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project.get("optional-dependencies", {}))


def pip_extras(command: str) -> list[str]:
    """The extras a ``pip install`` line names: ``'.[report]'``, ``'name[web,postgres]'``."""
    return [e.strip() for group in re.findall(r"\[([^\]]*)\]", command) for e in group.split(",")]


def scratch(tmp: Path) -> dict[str, str]:
    """Lay out the scratch folder and return the environment the blocks run in."""
    home = tmp / "home"
    (home / "data").mkdir(parents=True)
    shutil.copytree(DEMO / "rte", home / "data" / "RTE")
    (home / "glue_data").mkdir()
    shutil.copytree(DEMO / "sst2", home / "glue_data" / "SST-2")
    if (ROOT / "examples").is_dir():
        shutil.copytree(ROOT / "examples", tmp / "examples")
    bin_dir = tmp / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "annotate"
    run = "import sys; sys.argv[0] = 'annotate'; from annotate.cli import main; main()"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{run}" "$@"\n')
    shim.chmod(0o755)
    # Piped output as a script sees it: no terminal size, no ANNOTATE_* from the test run.
    drop = ("COLUMNS", "LINES", "FORCE_COLOR")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANNOTATE_") and k not in drop}
    env.update(
        HOME=str(home),
        PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        PYTHONPATH=str(ROOT),
        README_REPO=str(ROOT),
        README_DEMO=str(DEMO),
        NO_COLOR="1",
        TERM="dumb",
    )
    return env


def _squash(text: str) -> str:
    return " ".join(text.split())


def _bash_text(block: Block, known_extras: set[str], where: str) -> str:
    """The block as bash runs it: `pip install` lines checked, then left out."""
    out = []
    for line in block.text.splitlines():
        pip = _PIP.match(line)
        if pip:
            missing = [e for e in pip_extras(line) if e not in known_extras]
            assert not missing, f"{where}: `{line.strip()}` names unknown extras {missing}"
            out.append(":")
        else:
            out.append(line)
    return "\n".join(out)


def _run(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def _line_matches(expected: str, actual: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.rstrip().split("…"))
    return re.fullmatch(pattern, actual.rstrip()) is not None


def run_page(page: Path, tmp: Path) -> list[Block]:
    """Run every block of `page` in `tmp`; raise AssertionError naming the first that fails.
    Returns the blocks (run and skipped), for the coverage checks."""
    env = scratch(tmp)
    known = extras()
    blocks = parse(page)
    for block in blocks:
        where = f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}:{block.line}"
        if block.skip is not None:
            target = skip_target(block.skip)
            assert target is not None, f"{where}: a skip marker must say `covered by tests/….py`"
            assert target.exists(), f"{where}: the skip names {target}, which does not exist"
            continue
        if block.kind == "transcript":
            _run_transcript(block, tmp, env, where)
            continue
        done = _run(_bash_text(block, known, where), tmp, env)
        output = done.stdout + done.stderr
        assert done.returncode == block.exit_code, (
            f"{where}: exit status {done.returncode} (expected {block.exit_code})\n"
            f"--- block\n{block.text}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
        for text in block.outputs:
            assert _squash(text) in _squash(output), (
                f"{where}: output lacks {text!r}\n--- block\n{block.text}\n--- output\n{output}"
            )
    return blocks


def _run_transcript(block: Block, tmp: Path, env: dict[str, str], where: str) -> None:
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        command = lines[i][2:]
        expected: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        done = _run(command, tmp, env)
        actual = (done.stdout + done.stderr).rstrip("\n").splitlines()
        ok = len(actual) == len(expected) and all(map(_line_matches, expected, actual))
        assert ok, (
            f"{where}: `{command}` printed\n"
            + "\n".join(actual)
            + "\n--- the page quotes\n"
            + "\n".join(expected)
        )


def commands_named(blocks: list[Block]) -> set[str]:
    """Every ``annotate …`` command line of the page's blocks, run or skipped."""
    found = set()
    for block in blocks:
        for command in block.commands():
            for part in re.split(r"&&|\|\||;|\|", command):
                words = part.split()
                if "annotate" in words:
                    found.add(" ".join(words[words.index("annotate") :]))
    return found
