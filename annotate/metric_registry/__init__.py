"""The metrics a task may be scored with, in one table: each name maps to its function, the
names it is shown with, whether Wilson's interval fits it and the key of its published figure.

Task specs validate their `metrics` against it, scoring computes each metric with its function,
the report names and labels metrics from it and the benchmark row finds the papers' figures
through it. The built-in entries are in `builtin`; other packages add metrics through entry
points in the `annotate.metrics` group (`plugins`), read lazily and never over a built-in name.

It sits below specs and imports nothing numerical: reading a task spec must not import numpy.
"""

from __future__ import annotations

from annotate.metric_registry.builtin import BUILTIN
from annotate.metric_registry.entry import FAMILY_KIND, Family, Metric
from annotate.metric_registry.plugins import ENTRY_POINT_GROUP, MetricPluginError, plugin_metrics

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "FAMILY_KIND",
    "Family",
    "Metric",
    "MetricPluginError",
    "all_metrics",
    "find_metric",
    "metric",
]

_BUILTIN = {m.name: m for m in BUILTIN}


def find_metric(name: str) -> Metric | None:
    """The metric called `name`, or None. Plugins are loaded only for a name that is not
    built in."""
    found = _BUILTIN.get(name)
    if found is None:
        found = plugin_metrics().get(name)
    return found


def metric(name: str) -> Metric:
    """The metric called `name`; KeyError naming the known metrics when there is none."""
    found = find_metric(name)
    if found is None:
        raise KeyError(f"unknown metric {name!r}; known: {sorted(all_metrics())}")
    return found


def all_metrics() -> dict[str, Metric]:
    """Every metric by name: the built-in ones, then the installed plugins'."""
    return {**_BUILTIN, **plugin_metrics()}
