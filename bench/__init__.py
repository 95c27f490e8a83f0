"""Benchmarks with their reference baselines; run `python -m bench` for the whole table."""
