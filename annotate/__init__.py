"""annotate: a terminal workbench for human baselines on NLU benchmarks."""

__version__ = "0.3.0"
"""Kept equal to pyproject.toml's version (a test checks it): read at start-up, so no
importlib.metadata look-up on every command."""
