"""`export --format hf`: a study's human labels as a Hugging Face dataset folder that
`datasets.load_dataset(FOLDER)` loads as it is.

- `data/<split>-00000-of-00001.parquet` (`test`, or `validation` for a study of GLUE's dev or
  SuperGLUE's val items): one row per test unit (an item; MultiRC: a candidate
  answer) with an explicit pyarrow schema whose `huggingface` metadata declares the features:
  the item's id and fields, `label` (the hard answer by the study's rule: a ClassLabel over the
  task's answers, -1 where there is none; a rating; an entity text), `soft_label` (each
  answer's share of the labels), `n_labels`, `annotators` and `annotator_labels` (each
  annotator's own answer), `tied`, `gold` and `excluded`;
- `README.md`, the dataset card: a YAML header declaring the config (`data_files` per split),
  the splits and the features, then the human score with its interval, the columns, the
  effective protocol, the datasheet of the run and a licence left for the user to state.

The schema is written, not inferred, so two studies' files have the same types (a column of
nulls is still a string column) and load together.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate import install_hint
from annotate.errors import UserError
from annotate.export.item_answers import UnitAnswers, unit_answers
from annotate.export.submission import source_positions
from annotate.output_paths import output_folder
from annotate.report.build import study_report
from annotate.report.cells import METRIC_NAMES, interval, pct
from annotate.report.data.loading import excluded_items_of, load_study_data
from annotate.report.model.schema import StudyReport
from annotate.report.render.markdown import markdown_cell, markdown_code, markdown_table
from annotate.report.sections.datasheet import datasheet_sections
from annotate.report.sections.protocol import SECTION as PROTOCOL_SECTION
from annotate.store.models import Dataset, Item
from annotate.store.queries import find_study

HUB_SPLITS = {
    "train": "train",
    "dev": "validation",
    "val": "validation",
    "validation": "validation",
}
"""The Hub's name of the split a study's test items come from (GLUE's dev and SuperGLUE's val
are the Hub's validation); any other split is `test`."""


def split_of(engine: Engine, study: str) -> str:
    """The split the study's labelled items make: that of the dataset its sample is drawn from
    (a study run on SuperGLUE's val items publishes a `validation` split)."""
    row = find_study(engine, study)
    with Session(engine) as session:
        dataset = session.get(Dataset, row.test_dataset_id)
    return HUB_SPLITS.get(str(dataset.split).lower(), "test") if dataset else "test"


def data_file(split: str) -> str:
    return f"data/{split}-00000-of-00001.parquet"


PARQUET_EXTRA = "parquet"
LICENCE = "unknown"
"""The card's `license:` until the user states one (a Hub licence id)."""
RESERVED = {
    "item_id",
    "label",
    "soft_label",
    "n_labels",
    "annotators",
    "annotator_labels",
    "tied",
    "gold",
    "excluded",
}


@dataclass(frozen=True)
class Feature:
    """One column: its name, its `datasets` feature (as `Features.to_dict()` writes it) and the
    values of every row."""

    name: str
    feature: dict[str, Any]
    values: list[Any]


def _value(dtype: str) -> dict[str, Any]:
    return {"dtype": dtype, "_type": "Value"}


def _class_label(names: Sequence[str]) -> dict[str, Any]:
    return {"names": list(names), "_type": "ClassLabel"}


def _sequence(feature: dict[str, Any]) -> dict[str, Any]:
    # `Sequence`: read by datasets 2.x to 5.x alike (5.x reads it as a List).
    return {"feature": feature, "_type": "Sequence"}


def _arrow_type(feature: dict[str, Any]) -> Any:
    import pyarrow as pa

    kind = feature["_type"]
    if kind == "ClassLabel":
        return pa.int64()
    if kind == "Sequence":
        return pa.list_(_arrow_type(feature["feature"]))
    return {
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "float32": pa.float32(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
    }[feature["dtype"]]


def _yaml_type(feature: dict[str, Any]) -> dict[str, Any]:
    """A feature as the card's `dataset_info.features` entry writes it (without the name)."""
    kind = feature["_type"]
    if kind == "ClassLabel":
        names = {str(i): n for i, n in enumerate(feature["names"])}
        return {"dtype": {"class_label": {"names": names}}}
    if kind == "Sequence":
        inner = _yaml_type(feature["feature"])
        return {"sequence": inner.get("dtype", inner)}
    return {"dtype": feature["dtype"]}


def _field_feature(values: list[Any]) -> tuple[dict[str, Any], list[Any]]:
    """An item field's feature from its values: whole numbers, booleans, numbers or text (lists
    and objects as JSON text); a column of nulls is text."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return _value("bool"), values
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return _value("int64"), values
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return _value("float64"), [None if v is None else float(v) for v in values]
    text = [
        None
        if v is None
        else json.dumps(v, ensure_ascii=False, sort_keys=True)
        if isinstance(v, dict | list)
        else str(v)
        for v in values
    ]
    return _value("string"), text


def _item_fields(engine: Engine, table: UnitAnswers) -> dict[int, dict[str, Any]]:
    """Each sampled item's fields (its text), by its index in the coded items."""
    items = table.coded.items
    ids = [int(i) for i in items["item_id"].tolist()]
    with Session(engine) as session:
        rows = dict(session.execute(select(Item.id, Item.fields).where(Item.id.in_(ids))).all())
    return {n: rows.get(item_id) or {} for n, item_id in enumerate(ids)}


def dataset_features(engine: Engine, table: UnitAnswers, excluded: set[str]) -> list[Feature]:
    """The dataset's columns, in order."""
    coded = table.coded
    spec = coded.spec
    fields = _item_fields(engine, table)
    features = [Feature("item_id", _value("string"), [r["item_id"] for r in table.rows])]
    for f in spec.fields:
        name = f"item_{f.name}" if f.name in RESERVED else f.name
        feature, values = _field_feature([fields[i].get(f.name) for i in table.unit_item])
        features.append(Feature(name, feature, values))
    classes = table.classes
    if classes:
        code = {c: i for i, c in enumerate(classes)}
        answer = _class_label(classes)
        features += [
            Feature("label", answer, [-1 if h is None else code[h] for h in table.hard]),
            Feature("soft_label", _sequence(_value("float32")), table.soft),
        ]
        said: list[Any] = [[code[a] for a in answers] for answers in table.answers]
        gold = Feature("gold", answer, [-1 if g is None else code[g] for g in table.gold])
    elif coded.kind == "regression":
        answer = _value("float64")
        features.append(Feature("label", answer, table.hard))
        said = table.answers
        gold = Feature("gold", answer, table.gold)
    else:  # ReCoRD: entity texts; gold is the list of right answers
        answer = _value("string")
        features.append(Feature("label", answer, table.hard))
        said = table.answers
        gold = Feature("gold", _sequence(_value("string")), table.gold)
    features += [
        Feature("n_labels", _value("int32"), [r["n_labels"] for r in table.rows]),
        Feature("annotators", _sequence(_value("string")), table.annotators),
        Feature("annotator_labels", _sequence(answer), said),
    ]
    if classes:
        features.append(Feature("tied", _value("bool"), [bool(r["tied"]) for r in table.rows]))
    item_names = coded.items["source_id"].astype(str).tolist()
    features += [
        gold,
        Feature("excluded", _value("bool"), [item_names[i] in excluded for i in table.unit_item]),
    ]
    return features


def parquet_table_bytes(features: list[Feature]) -> bytes:
    """The rows as Parquet with the explicit schema and the `huggingface` metadata."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(f"--format hf needs pyarrow: {install_hint(PARQUET_EXTRA)}") from None
    info = {"info": {"features": {f.name: f.feature for f in features}}}
    schema = pa.schema(
        [pa.field(f.name, _arrow_type(f.feature)) for f in features],
        metadata={"huggingface": json.dumps(info)},
    )
    table = pa.table({f.name: f.values for f in features}, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


# --- the dataset card ------------------------------------------------------------------------


def _yaml_scalar(value: Any) -> str:
    """A YAML scalar: numbers as they are, text double-quoted (JSON's quoting is YAML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _yaml_key(key: Any) -> str:
    """A mapping key: plain when it is a name (`dataset_info`), quoted otherwise ('0')."""
    text = str(key)
    return text if text.isidentifier() else _yaml_scalar(text)


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block YAML of dicts, lists and scalars (the card's header)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{_yaml_key(key)}:")
                lines += _yaml(item, indent + 2)
            else:
                lines.append(f"{pad}{_yaml_key(key)}: {_yaml_scalar(item)}")
        return lines
    for item in value:
        if isinstance(item, dict | list) and item:
            inner = _yaml(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
        else:
            lines.append(f"{pad}- {_yaml_scalar(item)}")
    return lines


def card_header(features: list[Feature], split: str, n_rows: int, n_bytes: int) -> dict[str, Any]:
    """The card's YAML metadata: licence, config with its data files, features and splits."""
    return {
        "license": LICENCE,
        "task_categories": ["text-classification"],
        "annotations_creators": ["crowdsourced"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": split, "path": f"data/{split}-*"}],
            }
        ],
        "dataset_info": {
            "features": [{"name": f.name, **_yaml_type(f.feature)} for f in features],
            "splits": [{"name": split, "num_bytes": n_bytes, "num_examples": n_rows}],
        },
    }


COLUMN_NOTES = {
    "item_id": "the item's id in its source file (MultiRC: `question/answer`)",
    "label": "the answer by the study's rule (majority vote, ties by its tie rule; ratings: "
    "the protocol's mean or median); -1 (or empty) where there is none",
    "soft_label": "each answer's share of the item's labels, in the order of `label`'s names",
    "n_labels": "how many people labelled the item",
    "annotators": "who answered (pseudonyms), in the order of `annotator_labels`",
    "annotator_labels": "each annotator's own answer",
    "tied": "whether the top vote was shared (the rule then picked `label`, or none)",
    "gold": "the source file's gold label, -1 (or empty) where unknown",
    "excluded": "the researcher excluded the item from scoring (the score leaves it out)",
}


def _score_lines(report: StudyReport) -> list[str]:
    total = report.task_score
    metrics = ", ".join(METRIC_NAMES.get(m, m) for m in report.metrics)
    if total.value is None and report.n_labels == 0:
        return ["No score: the study has no test labels yet.", ""]
    if total.value is None and report.has_gold:  # labels and gold, no item scored
        return [f"No score: {markdown_cell(report.summary)}.", ""]
    if total.value is None:
        return ["No score: the test items have no gold labels.", ""]
    quoted = report.headline_interval
    bounds = interval(quoted.low, quoted.high) if quoted else interval(total.ci_low, total.ci_high)
    lines = [
        f"Human score (task score: {markdown_cell(metrics)}, x100): **{pct(total.value)}** "
        f"{bounds} on {report.n_items} items.",
        "",
        f"> {markdown_cell(report.summary)}",
        "",
    ]
    if quoted is not None:
        lines += [f"Interval: {markdown_cell(quoted.method)}.", ""]
    return lines


def dataset_card(
    report: StudyReport, features: list[Feature], header: dict[str, Any], split: str
) -> str:
    """README.md: the YAML header, then the score, columns, protocol, datasheet, licence."""
    study, task = markdown_cell(report.study), markdown_cell(report.task)
    lines = ["---", *_yaml(header), "---", ""]
    lines += [f"# Human labels: {study} ({task}, {markdown_cell(report.task_title)})", ""]
    lines += [
        f"The labels of study {markdown_code(report.study)}, written by `annotate export "
        "--format hf`: one row per "
        f"item of its sample (split `{split}`), {report.n_labels} labels by "
        f"{report.n_annotators} annotators.",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'labels = load_dataset("path/to/this/folder", split="{split}")',
        "```",
        "",
        "## Human score",
        "",
    ]
    lines += _score_lines(report)
    lines += ["## Columns", ""]
    for f in features:
        note = COLUMN_NOTES.get(f.name, "a field of the item, as its source file has it")
        lines.append(f"- {markdown_code(f.name)}: {note}")
    lines.append("")
    for title, headers, rows in [*PROTOCOL_SECTION.tables(report), *_datasheet(report)]:
        lines += [f"## {markdown_cell(title)}", ""]
        lines += markdown_table(headers, rows)
        lines.append("")
    lines += [
        "## Licence",
        "",
        "Not stated yet: set `license:` in the header above to the licence of these labels, "
        "within the terms of the source data's own licence.",
        "",
    ]
    return "\n".join(lines)


def _datasheet(report: StudyReport) -> list[tuple[str, list[str], list[list[str]]]]:
    return datasheet_sections(report.datasheet) if report.datasheet is not None else []


def write_hf_dataset(engine: Engine, study: str, folder: Path) -> list[Path]:
    """Write the dataset folder (see the module) and return the files written."""
    data = load_study_data(engine, study, exclusions=False)  # the dataset keeps every item
    table = unit_answers(
        data, models=False, positions=source_positions(engine, study, data.spec)
    )  # rows in the file's order, as the other per-item tables
    excluded = {e["source_id"] for e in excluded_items_of(engine, data.study_id).values()}
    features = dataset_features(engine, table, excluded)
    content = parquet_table_bytes(features)
    report = study_report(engine, study)
    split = split_of(engine, study)
    header = card_header(features, split, len(table.rows), len(content))
    card = dataset_card(report, features, header, split)
    data_path, card_path = folder / data_file(split), folder / "README.md"
    output_folder(folder, "--to")
    data_path.parent.mkdir(parents=True, exist_ok=True)
    data_path.write_bytes(content)
    card_path.write_text(card, encoding="utf-8")
    return [data_path, card_path]
