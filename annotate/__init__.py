"""annotate: a terminal workbench for human baselines on NLU benchmarks."""

__version__ = "0.1.0"
