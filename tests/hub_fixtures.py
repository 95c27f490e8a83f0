"""Hugging Face layouts of task data, written by the `datasets` library itself.

Records in the original files' format (SuperGLUE JSON lines, GLUE TSV rows) become a
`datasets.Dataset` with the Hub's features (its column names, `idx` int32, `label` a ClassLabel
with the Hub's names in the Hub's order), then Parquet files, sharded config folders, repository
snapshots, `save_to_disk` folders or `to_json`/`to_csv` output. The product never imports
`datasets`; only these fixtures do.

Run as a script, it lays out a Hub snapshot of SuperGLUE (cb/, rte/) for the docs' commands:
`python -m tests.hub_fixtures snapshot DEST`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class HubConfig:
    """One config of a Hub repository: its text columns (from the original record's keys) and
    its label names in the Hub's order."""

    columns: dict[str, str]
    """Hub column -> dotted key of the original record."""
    names: list[str]


SUPER_GLUE = {
    "cb": HubConfig(
        {"premise": "premise", "hypothesis": "hypothesis"},
        ["entailment", "contradiction", "neutral"],
    ),
    "rte": HubConfig(
        {"premise": "premise", "hypothesis": "hypothesis"}, ["entailment", "not_entailment"]
    ),
    "boolq": HubConfig({"question": "question", "passage": "passage"}, ["False", "True"]),
    "copa": HubConfig(
        {"premise": "premise", "choice1": "choice1", "choice2": "choice2", "question": "question"},
        ["choice1", "choice2"],
    ),
    "wsc": HubConfig(
        {
            "text": "text",
            "span1_index": "target.span1_index",
            "span2_index": "target.span2_index",
            "span1_text": "target.span1_text",
            "span2_text": "target.span2_text",
        },
        ["False", "True"],
    ),
    "wic": HubConfig(
        {
            "word": "word",
            "sentence1": "sentence1",
            "sentence2": "sentence2",
            "start1": "start1",
            "start2": "start2",
            "end1": "end1",
            "end2": "end2",
        },
        ["False", "True"],
    ),
    "axg": HubConfig(
        {"premise": "premise", "hypothesis": "hypothesis"}, ["entailment", "not_entailment"]
    ),
}
GLUE = {
    "rte": HubConfig(
        {"sentence1": "sentence1", "sentence2": "sentence2"}, ["entailment", "not_entailment"]
    ),
    "sst2": HubConfig({"sentence": "sentence"}, ["negative", "positive"]),
    "mnli": HubConfig(
        {"premise": "premise", "hypothesis": "hypothesis"},
        ["entailment", "neutral", "contradiction"],
    ),
}
GLUE_TSV_LABELS = {"sst2": {"0": "negative", "1": "positive"}}
"""GLUE's TSV digits -> the Hub's names (RTE's TSV has the names already)."""

INT_COLUMNS = {"span1_index", "span2_index", "start1", "start2", "end1", "end2"}


def _get(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        value = value[part]
    return value


def hub_label(raw: Any, config: HubConfig, tsv_names: dict[str, str] | None = None) -> int:
    """The Hub's integer for an original label: its index in the Hub's names (-1: none)."""
    if raw is None:
        return -1
    if tsv_names:
        raw = tsv_names[str(raw)]
    if isinstance(raw, int) and not isinstance(raw, bool):  # COPA: the choice's index
        return raw
    lowered = [n.lower() for n in config.names]
    return lowered.index(str(raw).lower())


def hub_dataset(records: list[dict[str, Any]], config: HubConfig, id_key: str = "idx", tsv=None):
    """A `datasets.Dataset` of `records` as the Hub has them."""
    from datasets import ClassLabel, Dataset, Features, Value

    features = {
        column: Value("int32") if column in INT_COLUMNS else Value("string")
        for column in config.columns
    }
    features["idx"] = Value("int32")
    features["label"] = ClassLabel(names=config.names)
    data: dict[str, list[Any]] = {column: [] for column in features}
    for record in records:
        for column, key in config.columns.items():
            data[column].append(_get(record, key))
        data["idx"].append(int(record[id_key]))
        data["label"].append(hub_label(record.get("label"), config, tsv))
    return Dataset.from_dict(data, features=Features(features))


def multirc_dataset(paragraphs: list[dict[str, Any]]):
    """The Hub's MultiRC: one row per answer, `idx` a struct of the three running numbers."""
    from datasets import ClassLabel, Dataset, Features, Value

    features = Features(
        {
            "paragraph": Value("string"),
            "question": Value("string"),
            "answer": Value("string"),
            "idx": {n: Value("int32") for n in ("paragraph", "question", "answer")},
            "label": ClassLabel(names=["False", "True"]),
        }
    )
    rows: dict[str, list[Any]] = {k: [] for k in features}
    for p in paragraphs:
        for q in p["passage"]["questions"]:
            for a in q["answers"]:
                rows["paragraph"].append(p["passage"]["text"])
                rows["question"].append(q["question"])
                rows["answer"].append(a["text"])
                rows["idx"].append(
                    {"paragraph": p["idx"], "question": q["idx"], "answer": a["idx"]}
                )
                rows["label"].append(int(a["label"]) if "label" in a else -1)
    return Dataset.from_dict(rows, features=features)


def record_dataset(passages: list[dict[str, Any]], *, with_spans: bool = True):
    """The Hub's ReCoRD: one row per query, entities as a sorted set of texts (its loader's
    `sorted(entities)`), `entity_spans` in the passage's order unless `with_spans` is False (older
    copies have no such column), `idx` {passage, query}."""
    from datasets import Dataset, Features, Sequence, Value

    features = Features(
        {
            "passage": Value("string"),
            "query": Value("string"),
            "entities": Sequence(Value("string")),
            "entity_spans": Sequence(
                {"text": Value("string"), "start": Value("int32"), "end": Value("int32")}
            ),
            "answers": Sequence(Value("string")),
            "idx": {"passage": Value("int32"), "query": Value("int32")},
        }
    )
    rows: dict[str, list[Any]] = {k: [] for k in features}
    for p in passages:
        text = p["passage"]["text"]
        spans = [(e["start"], e["end"]) for e in p["passage"]["entities"]]
        for qa in p["qas"]:
            rows["passage"].append(text)
            rows["query"].append(qa["query"])
            rows["entities"].append(sorted({text[s : e + 1] for s, e in spans}))
            rows["entity_spans"].append(
                {
                    "text": [text[s : e + 1] for s, e in spans],
                    "start": [s for s, _ in spans],
                    "end": [e for _, e in spans],
                }
            )
            rows["answers"].append([a["text"] for a in qa.get("answers", [])])
            rows["idx"].append({"passage": p["idx"], "query": qa["idx"]})
    data = Dataset.from_dict(rows, features=features)
    return data if with_spans else data.remove_columns("entity_spans")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def read_tsv(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t")
    return [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:] if line]


def write_parquet(dataset, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset.to_parquet(str(path))
    return path


def write_config(
    folder: Path, splits: dict[str, Any], shards: dict[str, int] | None = None
) -> Path:
    """A Hub config folder: `{split}-NNNNN-of-NNNNN.parquet`, a split in several shards when
    `shards` says so (contiguous, in order, as the Hub's converter writes them)."""
    for split, dataset in splits.items():
        n = (shards or {}).get(split, 1)
        for i in range(n):
            part = dataset.shard(num_shards=n, index=i, contiguous=True)
            write_parquet(part, folder / f"{split}-{i:05d}-of-{n:05d}.parquet")
    return folder


def write_snapshot(root: Path, configs: dict[str, dict[str, Any]]) -> Path:
    """A repository snapshot as `huggingface-cli download … --repo-type dataset` leaves it:
    a README.md and one folder per config."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("---\nconfigs: []\n---\n# a local copy\n", encoding="utf-8")
    for config, splits in configs.items():
        write_config(root / config, splits)
    return root


def in_hub_cache(snapshot: Path, cache: Path, repo: str, revision: str = "0" * 40) -> Path:
    """`snapshot`'s files moved into the Hugging Face cache's layout, as `load_dataset` and
    `huggingface-cli download` without --local-dir leave them: the content in
    `datasets--{owner}--{name}/blobs/<sha256>`, and `snapshots/<revision>/…` holding relative
    symbolic links to the blobs. Returns the snapshot folder."""
    import hashlib
    import os

    base = cache / f"datasets--{repo.replace('/', '--')}"
    target = base / "snapshots" / revision
    (base / "blobs").mkdir(parents=True, exist_ok=True)
    (base / "refs").mkdir(exist_ok=True)
    (base / "refs" / "main").write_text(revision, encoding="utf-8")
    for path in sorted(p for p in snapshot.rglob("*") if p.is_file()):
        blob = base / "blobs" / hashlib.sha256(path.read_bytes()).hexdigest()
        path.replace(blob)
        link = target / path.relative_to(snapshot)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    return target


def write_save_to_disk(folder: Path, splits: dict[str, Any]) -> Path:
    from datasets import DatasetDict

    DatasetDict(splits).save_to_disk(str(folder))
    return folder


def write_to_json(
    folder: Path, name: str, dataset, *, csv: bool = False, info: bool = True
) -> Path:
    """`Dataset.to_json()` (or `to_csv()`) output, with the library's dataset_info.json beside."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if csv:
        dataset.to_csv(str(path), index=False)
    else:
        dataset.to_json(str(path))
    if info:
        dataset.info.write_to_directory(str(folder))
    return path


CB_VAL = [
    {
        "premise": "Mara said the kettle had boiled dry twice that week. I doubt she noticed the smell.",
        "hypothesis": "she noticed the smell",
        "label": "contradiction",
        "idx": 0,
    },
    {
        "premise": "The porter knew the train would be late. He had seen the signal box go dark.",
        "hypothesis": "the train would be late",
        "label": "entailment",
        "idx": 1,
    },
    {
        "premise": "Do you think the ferry still runs on Sundays? Nobody in the village could say.",
        "hypothesis": "the ferry still runs on Sundays",
        "label": "neutral",
        "idx": 2,
    },
    {
        "premise": "Jon admitted that the ledger was his. The ink matched his pen.",
        "hypothesis": "the ledger was his",
        "label": "entailment",
        "idx": 3,
    },
    {
        "premise": "I don't believe the orchard was ever sold. Grandfather kept the deeds.",
        "hypothesis": "the orchard was sold",
        "label": "contradiction",
        "idx": 4,
    },
    {
        "premise": "Perhaps the letter arrived after all. The postman wouldn't say.",
        "hypothesis": "the letter arrived",
        "label": "neutral",
        "idx": 5,
    },
]
CB_TEST = [
    {
        "premise": "She wondered whether the bridge had reopened. The radio said nothing.",
        "hypothesis": "the bridge had reopened",
        "idx": 0,
    },
    {
        "premise": "Everyone knew the mill had closed. Its chimney was cold.",
        "hypothesis": "the mill had closed",
        "idx": 1,
    },
]
RTE_DEMO = ROOT / "annotate" / "demo_data" / "rte"


def super_glue_snapshot(root: Path) -> Path:
    """aps/super_glue as downloaded: cb/ (the records above) and rte/ (the demo data)."""
    cb = SUPER_GLUE["cb"]
    rte = SUPER_GLUE["rte"]
    test = [
        {k: v for k, v in r.items() if k != "label"} for r in read_jsonl(RTE_DEMO / "test.jsonl")
    ]
    return write_snapshot(
        root,
        {
            "cb": {"validation": hub_dataset(CB_VAL, cb), "test": hub_dataset(CB_TEST, cb)},
            "rte": {
                "validation": hub_dataset(read_jsonl(RTE_DEMO / "val.jsonl"), rte),
                "test": hub_dataset(test, rte),
            },
        },
    )


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    command, dest = sys.argv[1:3]
    rte_val = hub_dataset(read_jsonl(RTE_DEMO / "val.jsonl"), SUPER_GLUE["rte"])
    cb_val = hub_dataset(CB_VAL, SUPER_GLUE["cb"])
    if command == "snapshot":  # aps/super_glue as huggingface-cli leaves it
        super_glue_snapshot(Path(dest))
    elif command == "saved":  # DatasetDict({"validation": rte}).save_to_disk(dest)
        write_save_to_disk(Path(dest), {"validation": rte_val})
    elif command == "json":  # cb's validation split: to_json with and without dataset_info.json
        write_to_json(Path(dest), "cb-validation.jsonl", cb_val)
        first = hub_dataset(CB_VAL[:4], SUPER_GLUE["cb"])
        write_to_json(Path(dest) / "bare", "cb-validation.jsonl", first, info=False)
    else:
        raise SystemExit(f"unknown command {command!r}; expected snapshot, saved or json DEST")
