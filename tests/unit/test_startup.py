"""`annotate --help` and every command's `--help` start fast: they import no database, analysis
or screen library (those load inside the commands that use them)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("sqlalchemy", "sqlmodel", "pandas", "numpy", "scipy", "statsmodels", "textual")

PROBE = """
import contextlib, io, json, sys
import typer.main
from annotate.cli import app

HEAVY = %r

def loaded():
    return sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY))

def paths(command, prefix):
    yield prefix
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from paths(sub, [*prefix, name])

found = {"root": loaded(), "commands": [], "heavy": {}}
root = typer.main.get_command(app)
for path in paths(root, []):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            root.main([*path, "--help"], prog_name="annotate", standalone_mode=False)
        except SystemExit:
            pass
    assert "Usage" in out.getvalue(), (path, out.getvalue())
    found["commands"].append(" ".join(path))
    if loaded():
        found["heavy"][" ".join(path) or "annotate"] = loaded()
        break
print(json.dumps(found))
"""


def probe() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_of_every_command_imports_no_heavy_library():
    found = probe()
    assert found["root"] == []
    assert found["heavy"] == {}, f"--help imported {found['heavy']}"
    # the walk reached the commands and the subcommands of the groups
    assert {"label", "report", "study create", "curate author"} <= set(found["commands"])


def test_the_console_command_help_imports_no_heavy_library():
    """The real entry point, as a user runs it (`python -m annotate --help`)."""
    code = (
        "import runpy, sys\n"
        "sys.argv = ['annotate', '--help']\n"
        "try:\n"
        "    runpy.run_module('annotate', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_report_schema_and_the_consoles_study_screen_load_no_pandas():
    """`annotate report --schema` and the console's study screen read the report's model, not
    its data: pandas (~0.3 s) loads when a report is built (report/data), not before."""
    code = (
        "import contextlib, io, sys\n"
        "import annotate.tui.console.screens.study\n"
        "from annotate.cli import app\n"
        "import typer.main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    typer.main.get_command(app).main(\n"
        "        ['report', '--schema'], prog_name='annotate', standalone_mode=False)\n"
        "assert '\"StudyReport\"' in out.getvalue() or 'properties' in out.getvalue()\n"
        "print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
