"""annotate: a terminal workbench for human baselines on NLU benchmarks."""

__version__ = "0.5.0"
"""Kept equal to pyproject.toml's version (a test checks it): read at start-up, so no
importlib.metadata look-up on every command."""

DISTRIBUTION = "annotate-baselines"
"""The name on the package index (`annotate` there is an unrelated project); the import
package and the command are `annotate`."""


def install_hint(extra: str) -> str:
    """The command that installs an optional extra: pip install 'annotate-baselines[web]'."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


__all__ = [
    "DISTRIBUTION",
    "Store",
    "Study",
    "__version__",
    "agreement",
    "install_hint",
    "open_store",
]

_API = {"open_store", "agreement", "Store", "Study"}


def __getattr__(name: str) -> object:
    """`annotate.open_store`, `annotate.agreement`: the Python API (annotate/api.py), loaded on
    first use so that `import annotate` (and every command's start-up) stays cheap."""
    if name in _API:
        # By name, not `from annotate import api`: every layer imports `annotate` for
        # __version__, and the API (a front end) must not look like a dependency of them.
        import importlib

        return getattr(importlib.import_module("annotate.api"), name)
    raise AttributeError(f"module 'annotate' has no attribute {name!r}")
