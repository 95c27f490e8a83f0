"""The commands of the guide's "Labels from elsewhere" and of docs/recipes/bring-labels.md run, in
order, against a scratch store (heredocs write their files)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def _run(cli, script: str) -> list[str]:
    """Run a bash block's heredocs and `annotate` lines; return each command's output."""
    lines = iter(script.splitlines())
    outputs = []
    for line in lines:
        heredoc = re.fullmatch(r"cat > (\S+) <<'EOF'", line.strip())
        if heredoc:
            body = []
            for inner in lines:
                if inner == "EOF":
                    break
                body.append(inner)
            Path(heredoc.group(1)).write_text("\n".join(body) + "\n")
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        args = shlex.split(line, comments=True)
        assert args[0] == "annotate", line
        result = cli(*args[1:])
        assert result.code == 0, (line, result.stderr)
        outputs.append(result.stdout + result.stderr)
    return outputs


@pytest.mark.parametrize("where", ["docs/guide/labels.md", "docs/recipes/bring-labels.md"])
def test_the_bring_labels_commands_run(cli, tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / where).read_text()
    outputs = []
    for block in _bash_blocks(text):
        outputs += _run(cli, block)
    assert any("collected outside annotate" in out for out in outputs)
    assert list((tmp_path / "out").glob("*-labels.csv"))
    if where != "docs/guide/labels.md":  # the recipe's --skip-when, flag= and second-study commands
        assert any("left out: 2 answers (--skip-when)" in out for out in outputs)
        assert any("flagged: 2 answers, the column's value as comment" in out for out in outputs)
        assert any("as study 'cb-na'; nothing changed" in out for out in outputs)
        header = (tmp_path / "out" / "cb-mturk-labels.csv").read_text().splitlines()[0]
        assert header.endswith(",raw_answer")
        assert any("w03: 2 test labels set aside" in out for out in outputs), outputs[-1]


def test_the_recipe_python_runs(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "docs/recipes/bring-labels.md").read_text()
    for block in _bash_blocks(text)[:2]:
        _run(cli, block)
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.setenv("ANNOTATE_DB", f"sqlite:///{tmp_path / 'store.db'}")
    namespace: dict = {}
    exec(compile(code.replace('"annotate.db"', "None"), "bring-labels.md", "exec"), namespace)
    assert len(namespace["labels"]) == 9
