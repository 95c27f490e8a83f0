"""Importers: every layout and quirk, and every kind of bad input (all or nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.formats.importer import files_in_folder, import_file
from annotate.store.models import Dataset, Item
from tests import fixtures as fx


def items_of(workspace, dataset_id: int) -> list[Item]:
    with Session(workspace.engine) as s:
        return list(
            s.exec(select(Item).where(Item.dataset_id == dataset_id).order_by(Item.position))
        )


def n_datasets(workspace) -> int:
    with Session(workspace.engine) as s:
        return len(s.exec(select(Dataset)).all())


def test_cola_without_header_and_test_with_header(workspace, tmp_path: Path):
    spec = specs.load_task("CoLA")
    train = import_file(
        workspace.engine, spec, fx.write_text(tmp_path / "train.tsv", fx.COLA_HEADERLESS)
    )
    items = items_of(workspace, train.dataset_id)
    assert train.split == "train" and len(items) == 4
    assert items[0].fields["sentence"] == "The kettle whistled before anyone noticed."
    assert [i.gold for i in items] == ["1", "0", "1", "0"]
    assert [i.source_id for i in items] == ["0", "1", "2", "3"]  # numbered by row
    test = import_file(workspace.engine, spec, fx.write_text(tmp_path / "test.tsv", fx.COLA_TEST))
    test_items = items_of(workspace, test.dataset_id)
    assert test.split == "test" and [i.gold for i in test_items] == [None, None]
    assert test.detail["labelled"] == 0


def test_cola_file_without_final_newline(workspace, tmp_path: Path):
    path = fx.write_text(tmp_path / "dev.tsv", fx.COLA_HEADERLESS, final_newline=False)
    result = import_file(workspace.engine, specs.load_task("glue/cola"), path)
    assert result.n_items == 4 and result.split == "dev"


def test_sst2_keeps_text_verbatim(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine, specs.load_task("SST-2"), fx.write_text(tmp_path / "dev.tsv", fx.SST2_DEV)
    )
    items = items_of(workspace, result.dataset_id)
    assert items[1].fields["sentence"] == "the plot wanders off and does n't come back . "
    assert [i.gold for i in items] == ["1", "0", "1"]


def test_mrpc_unbalanced_quote_is_plain_text(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine, specs.load_task("MRPC"), fx.write_text(tmp_path / "dev.tsv", fx.MRPC_DEV)
    )
    items = items_of(workspace, result.dataset_id)
    assert len(items) == 2
    assert items[0].fields["sentence2"].startswith('" The budget')


def test_mrpc_original_file_with_bom_and_crlf(workspace, tmp_path: Path):
    path = fx.write_text(tmp_path / "msr_paraphrase_train.txt", fx.MRPC_ORIGINAL)
    result = import_file(workspace.engine, specs.load_task("MRPC"), path)
    items = items_of(workspace, result.dataset_id)
    assert result.split == "train" and [i.gold for i in items] == ["1", "0"]
    assert items[0].fields["sentence2"] == "At dawn, the ferry departed."  # no stray \r


def test_stsb_scores_and_stray_quote(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine, specs.load_task("STS-B"), fx.write_text(tmp_path / "dev.tsv", fx.STSB_DEV)
    )
    items = items_of(workspace, result.dataset_id)
    assert [i.gold for i in items] == [4.6, 0.25, 3.8]
    assert items[1].fields["sentence1"] == '"Storm hits coast'


def test_mnli_dev_and_test_column_counts(workspace, tmp_path: Path):
    spec = specs.load_task("MNLI-m")
    dev = import_file(
        workspace.engine, spec, fx.write_text(tmp_path / "dev_matched.tsv", fx.MNLI_DEV)
    )
    test = import_file(
        workspace.engine, spec, fx.write_text(tmp_path / "test_matched.tsv", fx.MNLI_TEST)
    )
    assert dev.split == "dev" and test.split == "test"
    assert [i.gold for i in items_of(workspace, dev.dataset_id)] == ["entailment", "contradiction"]
    assert items_of(workspace, test.dataset_id)[0].gold is None


def test_qqp_id_column(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine,
        specs.load_task("QQP"),
        fx.write_text(tmp_path / "train.tsv", fx.QQP_TRAIN),
    )
    assert [i.source_id for i in items_of(workspace, result.dataset_id)] == ["7", "8"]


def test_diagnostic_tags_per_coarse_category(workspace, tmp_path: Path):
    path = fx.write_text(tmp_path / "diagnostic-full.tsv", fx.DIAGNOSTIC_FULL)
    result = import_file(workspace.engine, specs.load_task("glue/ax"), path)
    items = items_of(workspace, result.dataset_id)
    assert len(items) == 4 and items[0].gold == "contradiction"
    assert items[2].tags["Lexical Semantics"] == ["Lexical entailment", "Quantifiers"]
    assert items[2].tags["Predicate-Argument Structure"] == ["Active/Passive"]
    assert items[3].tags["Knowledge"] == ["World knowledge"] and items[3].tags["Logic"] == []
    assert items[3].fields["hypothesis"].endswith("by the crew.")  # no CR left


def test_superglue_jsonl_without_final_newline(workspace, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE, final_newline=False)
    result = import_file(workspace.engine, specs.load_task("superglue/rte"), path)
    items = items_of(workspace, result.dataset_id)
    assert result.split == "dev" and len(items) == 3
    assert items[2].fields["premise"] == "A [CLS] token opens the input [SEP] here."


@pytest.mark.parametrize("labels", [[True, False], ["true", "false"], ["True", "False"]])
def test_boolq_boolean_or_string_labels(workspace, tmp_path: Path, labels):
    rows = [{**r, "label": v} for r, v in zip(fx.SG_BOOLQ, labels, strict=True)]
    result = import_file(
        workspace.engine, specs.load_task("BoolQ"), fx.write_jsonl(tmp_path / "val.jsonl", rows)
    )
    assert [i.gold for i in items_of(workspace, result.dataset_id)] == ["true", "false"]


def test_axb_string_ids_and_tags(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine,
        specs.load_task("AX-b"),
        fx.write_jsonl(tmp_path / "AX-b.jsonl", fx.SG_AXB),
    )
    items = items_of(workspace, result.dataset_id)
    assert [i.source_id for i in items] == ["0", "1"]
    assert items[0].tags["Logic"] == ["Universal", "Upward monotone"]
    assert items[1].tags["Lexical Semantics"] == ["Quantifiers"]


def test_multirc_one_item_per_question(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine,
        specs.load_task("MultiRC"),
        fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_MULTIRC),
    )
    items = items_of(workspace, result.dataset_id)
    assert result.detail == {
        "items": 2,
        "paragraphs": 1,
        "questions": 2,
        "answers": 5,
        "labelled": 1,
    }
    assert items[1].gold == {"2": "1", "3": "0", "4": "1"}
    assert [a["text"] for a in items[1].fields["answers"]] == ["The vines", "Snow", "Bean vines"]


def test_record_entities_have_inclusive_end(workspace, tmp_path: Path):
    result = import_file(
        workspace.engine,
        specs.load_task("ReCoRD"),
        fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RECORD),
    )
    (item,) = items_of(workspace, result.dataset_id)
    assert item.source_id == "5"
    assert item.fields["entities"] == ["Lena Ortiz", "Harbor City", "Pine Falls"]
    assert item.gold == ["Harbor City"]


def test_folder_import_finds_every_split(tmp_path: Path):
    fx.write_jsonl(tmp_path / "RTE" / "val.jsonl", fx.SG_RTE)
    fx.write_jsonl(
        tmp_path / "RTE" / "test.jsonl",
        [{k: v for k, v in r.items() if k != "label"} for r in fx.SG_RTE],
    )
    found = files_in_folder(tmp_path / "RTE", specs.load_task("superglue/rte"))
    assert [(p.name, s) for p, s in found] == [("val.jsonl", "dev"), ("test.jsonl", "test")]


def test_same_file_twice_is_not_duplicated(workspace, tmp_path: Path):
    spec = specs.load_task("superglue/rte")
    path = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE)
    first = import_file(workspace.engine, spec, path)
    again = import_file(workspace.engine, spec, path)
    assert again.already_imported and again.dataset_id == first.dataset_id
    assert n_datasets(workspace) == 1


# --- bad input: one clear error naming file and line; the store is unchanged -----------------

GOOD_RTE = '{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": 0}\n'
BAD_INPUTS = [
    ("glue/mrpc", "dev.tsv", fx.MRPC_DEV + "1\t9\t9\tonly four fields\n", 4, "ragged row"),
    (
        "glue/stsb",
        "dev.tsv",
        fx.STSB_DEV.replace("\tsentence2\tscore", "\tscore"),
        1,
        "missing column 'sentence2'",
    ),
    ("glue/sst2", "dev.tsv", fx.SST2_DEV + "a fine film . \tmaybe\n", 5, "unknown label 'maybe'"),
    ("glue/stsb", "dev.tsv", fx.STSB_DEV.replace("3.800", "7.5"), 4, "outside 0..5"),
    (
        "superglue/rte",
        "val.jsonl",
        '{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": 0}\n{"premise": "a",,}\n',
        2,
        "JSON syntax error",
    ),
    (
        "superglue/rte",
        "val.jsonl",
        '{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": 0}\n{"premise": "c", "hypothesis": "d", "label": "entailment", "idx": 0}\n',
        2,
        "duplicate id '0'",
    ),
    ("superglue/rte", "val.jsonl", "\n\n", 1, "the file is empty"),
    # a TSV given to a JSON lines task said only "JSON syntax error: Expecting value"
    (
        "superglue/rte",
        "val.jsonl",
        fx.SST2_DEV,
        1,
        "not JSON lines, as this task's files are (a TSV or CSV file?): JSON syntax error",
    ),
    (
        "superglue/rte",
        "val.jsonl",
        '{"question": "q", "passage": "p", "idx": 0, "label": true}\n',
        1,
        "missing key 'premise'",
    ),
    ("glue/qqp", "train.tsv", fx.SST2_DEV, 1, "no header row naming the task's columns"),
    # 29.5: hostile lines are refused with file:line, not a traceback later
    (
        "superglue/rte",
        "val.jsonl",
        GOOD_RTE + '{"premise": "a\\ud800b", "hypothesis": "b", "label": "entailment", "idx": 1}\n',
        2,
        "lone surrogate",
    ),
    ("superglue/rte", "val.jsonl", GOOD_RTE + "[" * 100_000 + "]" * 100_000 + "\n", 2, "nested"),
    (
        "superglue/rte",
        "val.jsonl",
        GOOD_RTE
        + '{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": '
        + "9" * 5000
        + "}\n",
        2,
        "JSON value refused",
    ),
    (
        "superglue/rte",
        "val.jsonl",
        GOOD_RTE
        + '{"premise": "a", "hypothesis": "b", "label": "entailment", "idx": "'
        + "7" * 300
        + '"}\n',
        2,
        "id of 300 characters",
    ),
    (
        "superglue/rte",
        "val.jsonl",
        GOOD_RTE + '{"premise": "' + "[" * 70 + "]" * 70 + '"}\n',
        2,
        "missing key",  # brackets inside a string are text, not nesting
    ),
    (
        "superglue/rte",
        "val.jsonl",
        GOOD_RTE + '{"premise": ' + "[" * 70 + "]" * 70 + "}\n",
        2,
        "nested deeper than 64",
    ),
]


@pytest.mark.parametrize(("task", "name", "text", "line", "reason"), BAD_INPUTS)
def test_bad_file_names_line_and_reason_and_changes_nothing(
    workspace, tmp_path, task, name, text, line, reason
):
    good = import_file(
        workspace.engine,
        specs.load_task("superglue/rte"),
        fx.write_jsonl(tmp_path / "good" / "val.jsonl", fx.SG_RTE),
    )
    path = fx.write_text(tmp_path / name, text)
    with pytest.raises(DataFileError) as caught:
        import_file(workspace.engine, specs.load_task(task), path)
    assert caught.value.line == line
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"{path}:{line}: ")
    with Session(workspace.engine) as s:
        assert [d.id for d in s.exec(select(Dataset))] == [good.dataset_id]
        assert len(s.exec(select(Item)).all()) == good.n_items


@pytest.mark.parametrize(("task", "label"), [("superglue/copa", 2), ("glue/sst2", 2)])
def test_an_integer_label_of_a_numbered_task_outside_its_labels_is_unknown(
    cli, tmp_path: Path, task: str, label: int
):
    """COPA's labels are the integers 0 and 1 themselves (SST-2's too): a 2 is an unknown
    label, not a class number that --label-names would name."""
    rows = [
        {
            "premise": "The glass fell.",
            "choice1": "It broke.",
            "choice2": "It sang.",
            "question": "effect",
            "sentence": "a fine film .",
            "idx": 0,
            "label": 0,
        },
        {
            "premise": "The road was wet.",
            "choice1": "It rained.",
            "choice2": "It was noon.",
            "question": "cause",
            "sentence": "a dull film .",
            "idx": 1,
            "label": label,
        },
    ]
    path = fx.write_jsonl(tmp_path / "val.jsonl", rows)
    told = fx.refused_import(cli, task, path, "--split", "dev")
    assert f"{path}:2: unknown label {label}; {task} labels are " in told
    assert "--label-names" not in told and "class number" not in told


def test_a_line_over_the_limit_is_refused_without_reading_it_whole(
    workspace, tmp_path: Path, monkeypatch
):
    """29.5: a 2 GiB line is refused by its line number (the limit, shrunk here to 1 KiB, is
    the same code path as the documented 16 MiB)."""
    from annotate.formats import readers

    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1024)
    path = fx.write_text(tmp_path / "val.jsonl", GOOD_RTE + '{"premise": "' + "x" * 5000 + '"}\n')
    with pytest.raises(DataFileError, match=r"val\.jsonl:2: line longer than the limit"):
        import_file(workspace.engine, specs.load_task("superglue/rte"), path)
    assert n_datasets(workspace) == 0


def test_invalid_utf8_names_the_line(workspace, tmp_path: Path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(fx.SST2_DEV.encode() + b"caf\xe9 au lait . \t1\n")
    with pytest.raises(DataFileError, match=r"dev\.tsv:5: not valid UTF-8"):
        import_file(workspace.engine, specs.load_task("SST-2"), path)
    assert n_datasets(workspace) == 0


def test_error_after_many_rows_rolls_back_everything(workspace, tmp_path: Path):
    rows = "".join(f"film number {i} . \t{i % 2}\n" for i in range(12_000))
    path = fx.write_text(tmp_path / "train.tsv", "sentence\tlabel\n" + rows + "broken row\n")
    with pytest.raises(DataFileError, match="train.tsv:12002: row has 1 fields"):
        import_file(workspace.engine, specs.load_task("SST-2"), path)
    with Session(workspace.engine) as s:
        assert s.exec(select(Item)).first() is None
        assert s.exec(select(Dataset)).first() is None


def test_unknown_split_needs_option(workspace, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "mydata.jsonl", fx.SG_RTE)
    with pytest.raises(UserError, match="--split"):
        import_file(workspace.engine, specs.load_task("superglue/rte"), path)
    assert (
        import_file(workspace.engine, specs.load_task("superglue/rte"), path, split="dev").n_items
        == 3
    )
