"""Metrics other packages add: each is an entry point in the `annotate.metrics` group whose
name is the metric's and whose object is its `Metric`. They are loaded on first need (a task
names a metric that is not built in, or the whole list is asked for), once per process."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from annotate.errors import UserError
from annotate.metric_registry.builtin import BUILTIN
from annotate.metric_registry.entry import FAMILY_KIND, Metric

ENTRY_POINT_GROUP = "annotate.metrics"


class MetricPluginError(UserError):
    """An installed metric plugin that cannot be used."""


def _origin(point: EntryPoint) -> str:
    dist = point.dist
    package = f"package {dist.name} {dist.version}, " if dist is not None else ""
    return f"metric plugin {point.name!r} ({package}entry point {point.value})"


def _load(point: EntryPoint) -> Metric:
    if any(point.name == m.name for m in BUILTIN):
        raise MetricPluginError(
            f"{_origin(point)}: {point.name!r} is a built-in metric and cannot be replaced; "
            "give the plugin's metric another name"
        )
    try:
        loaded = point.load()
    except Exception as error:  # any failure of someone else's module: name the plugin
        raise MetricPluginError(
            f"{_origin(point)} cannot be loaded: {type(error).__name__}: {error}"
        ) from error
    if not isinstance(loaded, Metric):
        raise MetricPluginError(
            f"{_origin(point)} is a {type(loaded).__name__}, not an annotate Metric"
        )
    if loaded.name != point.name:
        raise MetricPluginError(
            f"{_origin(point)} holds the metric {loaded.name!r}: the entry point must be "
            "named like its metric"
        )
    if loaded.family not in FAMILY_KIND:
        raise MetricPluginError(
            f"{_origin(point)}: unknown family {loaded.family!r}; one of {sorted(FAMILY_KIND)}"
        )
    return loaded


@cache
def plugin_metrics() -> Mapping[str, Metric]:
    """The installed plugins' metrics by name (in name order); a plugin may not replace a
    built-in metric, nor two plugins register one name."""
    found: dict[str, Metric] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        if point.name in found:
            raise MetricPluginError(
                f"{_origin(point)}: another installed plugin already registers {point.name!r}"
            )
        found[point.name] = _load(point)
    return found
