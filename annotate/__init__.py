"""annotate: a terminal workbench for human baselines on NLU benchmarks."""

__version__ = "0.3.0"
"""Kept equal to pyproject.toml's version (a test checks it): read at start-up, so no
importlib.metadata look-up on every command."""

DISTRIBUTION = "annotate-baselines"
"""The name on the package index (`annotate` there is an unrelated project); the import
package and the command are `annotate`."""


def install_hint(extra: str) -> str:
    """The command that installs an optional extra: pip install 'annotate-baselines[web]'."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"
