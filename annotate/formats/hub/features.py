"""ClassLabel names from the features the `datasets` library stores beside its data.

The features are one JSON object, column -> feature: `{"label": {"names": [...], "_type":
"ClassLabel"}, "idx": {"dtype": "int32", "_type": "Value"}}`. They sit in a Parquet or Arrow
file's schema metadata under `huggingface` (`{"info": {"features": …}}`) and in a
`dataset_info.json` (`{"features": …}`). A label is the index into its column's names, in the
file's order, which need not be the task's order (`aps/super_glue` cb: entailment,
contradiction, neutral).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError

Features = dict[str, Any]
INFO_FILE = "dataset_info.json"


def features_from_metadata(metadata: dict[bytes, bytes] | None) -> Features | None:
    """The features in an Arrow schema's metadata (key `huggingface`), None when absent."""
    raw = (metadata or {}).get(b"huggingface")
    if raw is None:
        return None
    try:
        info = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    features = info.get("info", {}).get("features") if isinstance(info, dict) else None
    return features if isinstance(features, dict) else None


def features_from_info_file(path: Path, configs: list[str] | None = None) -> Features | None:
    """The features of a `dataset_info.json`; an unreadable one is an error naming it, and so
    is one of another config than `configs` (the task's on the Hub): beside files of several
    tasks, its class names would be another task's, and CB's and MNLI's are the same three
    names in another order, which no check of the names can catch."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFileError(path, None, f"not a readable dataset_info.json ({exc})") from None
    config = info.get("config_name") if isinstance(info, dict) else None
    if configs and isinstance(config, str) and config:
        wanted = [c.lower() for c in configs]
        # `mnli` is the config of MNLI matched's files as well as `mnli_matched`.
        if not any(c.startswith(config.lower()) or config.lower().startswith(c) for c in wanted):
            raise DataFileError(
                path,
                None,
                f"describes the config {config!r}, not {' or '.join(configs)}: the file beside "
                "it is another task's, or it is another task's dataset_info.json",
            )
    features = info.get("features") if isinstance(info, dict) else None
    if features is not None and not isinstance(features, dict):
        raise DataFileError(path, None, "its `features` is not a JSON object")
    return features


def info_beside(path: Path, configs: list[str] | None = None) -> Features | None:
    """The features of the `dataset_info.json` in `path`'s folder, if there is one."""
    info = path.parent / INFO_FILE
    return features_from_info_file(info, configs) if info.is_file() else None


def class_names(features: Features | None) -> dict[str, list[str]]:
    """Column -> ClassLabel names, for every ClassLabel column of the features."""
    found: dict[str, list[str]] = {}
    for column, feature in (features or {}).items():
        if isinstance(feature, dict) and feature.get("_type") == "ClassLabel":
            names = feature.get("names")
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                found[column] = names
    return found
