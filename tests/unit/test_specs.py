"""Task and protocol specs: the built-ins load, aliases resolve, bad specs give clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate import specs
from annotate.errors import SpecError, UserError

GLUE = ["cola", "sst2", "mrpc", "qqp", "stsb", "mnli-m", "mnli-mm", "qnli", "rte", "wnli", "ax"]
SUPERGLUE = ["boolq", "cb", "copa", "multirc", "record", "rte", "wic", "wsc", "axb", "axg"]


def test_every_glue_and_superglue_task_is_built_in():
    names = {t.name for t in specs.all_tasks()}
    assert {f"glue/{n}" for n in GLUE} | {f"superglue/{n}" for n in SUPERGLUE} <= names


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("SST-2", "glue/sst2"),
        ("sst-2", "glue/sst2"),
        ("AX-b", "superglue/axb"),
        ("ax-B", "superglue/axb"),
        ("MNLI-m", "glue/mnli-m"),
        ("STS-B", "glue/stsb"),
        ("superglue/RTE", "superglue/rte"),
        ("glue/rte", "glue/rte"),
        ("ReCoRD", "superglue/record"),
    ],
)
def test_official_spellings_resolve(spelling: str, canonical: str):
    assert specs.resolve_task_name(spelling) == canonical


def test_alias_shared_by_two_benchmarks_must_be_qualified():
    with pytest.raises(UserError, match="ambiguous.*glue/rte.*superglue/rte"):
        specs.resolve_task_name("RTE")


def test_unknown_task():
    with pytest.raises(UserError, match="unknown task 'nope'"):
        specs.load_task("nope")


def test_a_mistyped_task_name_suggests_the_task():
    """`--task superglue/rtee` said only "unknown task"; the nearest spelling is named."""
    with pytest.raises(
        UserError, match=r"unknown task 'superglue/rtee' \(did you mean superglue/rte\?\)"
    ):
        specs.load_task("superglue/rtee")
    with pytest.raises(UserError, match=r"unknown task 'sst-3' \(did you mean glue/sst2\?\)"):
        specs.load_task("sst-3")
    with pytest.raises(UserError) as far:
        specs.load_task("nope")
    assert "did you mean" not in str(far.value)


def test_cb_answers_on_seven_points_and_collapses_to_three():
    cb = specs.load_task("CB")
    assert [o.value for o in cb.answer_options()] == [str(i) for i in range(1, 8)]
    assert [cb.collapse(str(i)) for i in range(1, 8)] == [
        "entailment",
        "entailment",
        "neutral",
        "neutral",
        "neutral",
        "contradiction",
        "contradiction",
    ]


def test_every_builtin_task_has_guidelines_and_a_submission_file():
    for task in specs.all_tasks():
        assert len(task.guidelines.strip()) > 100, task.name
        assert task.submission.file.endswith((".tsv", ".jsonl")), task.name


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


MINIMAL_TASK = """
benchmark = "custom"
title = "Mine"
kind = "classification"
layout = "single"
metrics = ["accuracy"]
guidelines = "Decide."
fields = [{ name = "text", label = "Text" }]
labels = [{ value = "a", text = "A", key = "1" }, { value = "b", text = "B", key = "2" }]
source = { reader = "csv", label = ["gold"] }
submission = { file = "mine.tsv", style = "glue-tsv" }
"""


def test_custom_task_file_loads(tmp_path: Path):
    task = specs.load_task(write(tmp_path / "mine.toml", MINIMAL_TASK))
    assert task.name == "mine" and task.label_values() == ["a", "b"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('metrics = ["accuracy"]', 'metrics = ["acuracy"]'), "unknown metric"),
        (('key = "2"', 'key = "1"'), "answer keys must be unique"),
        (('key = "2"', 'key = "q"'), "reserved for the annotator screen .*choose other keys"),
        # keys no keystroke gives: the task loaded, and its answers could not be typed
        (('key = "2"', 'key = "ab"'), r"answer keys \['ab'\] are not one letter, digit or sign"),
        (('key = "2"', 'key = "enter"'), r"\['enter'\] are not one letter, digit or sign"),
        (('key = "2"', 'key = " "'), r"\[' '\] are not one letter, digit or sign"),
        (('title = "Mine"', 'title = "Mine"\ncolour = "red"'), "colour: unknown key"),
        (('layout = "single"', 'layout = "circle"'), "layout"),
        (('title = "Mine"', 'title = "Mine'), "not valid TOML"),
    ],
)
def test_bad_task_spec_is_a_clear_error(tmp_path: Path, change, message):
    text = MINIMAL_TASK.replace(*change)
    with pytest.raises(SpecError, match=message) as caught:
        specs.load_task(write(tmp_path / "bad.toml", text))
    assert "bad.toml" in str(caught.value)


def test_a_study_stored_with_a_key_no_file_may_have_now_still_opens(tmp_path: Path):
    """The rule that a key is one typed character is a task file's: a study made before it,
    its spec stored with a key such as `ab`, still opens (its answers were given by mouse)."""
    stored = specs.load_task(write(tmp_path / "mine.toml", MINIMAL_TASK)).model_dump(mode="json")
    stored["labels"][1]["key"] = "ab"
    assert specs.study_task("mine.toml", stored, origin="study 's'").labels[1].key == "ab"


def test_a_mistake_in_a_list_of_tables_is_counted_from_1(cli, tmp_path: Path):
    """pydantic counts from 0: the second label's key was reported as "labels.1.key"."""
    text = MINIMAL_TASK.replace('key = "2"', 'key = 2, colour = "red"').replace(
        'name = "text"', "name = 5"
    )
    data = tmp_path / "dev.csv"
    data.write_text("text,gold\nhello,a\n")
    done = cli("import", write(tmp_path / "bad.toml", text), data, "--split", "dev")
    assert done.code == 1
    assert done.stderr == (
        f"error: {tmp_path / 'bad.toml'}: invalid task spec: fields #1.name: Input should be a "
        "valid string; labels #2.key: Input should be a valid string; labels #2.colour: "
        "unknown key\n"
    )


def test_crowd_settings_count_from_1_too(tmp_path: Path):
    from annotate.protocol.crowd_config import read_config_file

    path = tmp_path / "crowd.toml"
    path.write_text(f'platform = "prolific"\nstudy_ids = ["{"a" * 24}", 5]\n')
    with pytest.raises(UserError, match=r"invalid crowd settings: study_ids #2: Input should be a"):
        read_config_file(path)


def test_presets_exist_with_documented_values():
    sg = specs.load_protocol("superglue-2019")
    assert (
        sg.training_items,
        sg.gate_rule,
        sg.gate_min_items,
        sg.test_sample,
        sg.annotators_per_item,
    ) == (30, "median", 5, 100, 5)
    assert sg.effective("superglue/wsc").test_sample == "all"
    assert specs.load_protocol("glue-2019").training_items == 20
    quick = specs.load_protocol("quick")
    assert quick.gate_rule == "threshold" and quick.gate_threshold is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('description = "x"\ngate_rule = "threshold"\n', "needs gate_threshold"),
        ('description = "x"\nannotators_per_item = 0\n', "annotators_per_item"),
        ('description = "x"\ntie_rule = "coin"\n', "tie_rule"),
        ('description = "x"\nseeed = 3\n', "seeed: unknown key"),
        ('description = "x"\ntest_sample = "many"\n', "test_sample"),
    ],
)
def test_bad_protocol_is_a_clear_error(tmp_path: Path, text: str, message: str):
    with pytest.raises(SpecError, match=message):
        specs.load_protocol(write(tmp_path / "p.toml", text))


def test_overrides_are_validated_too():
    quick = specs.load_protocol("quick")
    assert quick.effective(None, {"annotators_per_item": 3}).annotators_per_item == 3
    with pytest.raises(SpecError, match="gate_threshold"):
        quick.effective(None, {"gate_threshold": 2})


def test_parse_setting_reads_toml_values():
    assert specs.parse_setting("test_sample=all") == ("test_sample", "all")
    assert specs.parse_setting("test_sample=40") == ("test_sample", 40)
    assert specs.parse_setting('tie_rule="abstain"') == ("tie_rule", "abstain")
    with pytest.raises(UserError):
        specs.parse_setting("nothing")
