"""SuperGLUE records that parse but are malformed are refused at import, naming the file, the
line and the reason, and the store is left as it was: WiC's character spans outside their
sentence, WSC's word index past its text, an odd number of AX-g rows (its minimal pairs come
in twos), a ReCoRD entity past its passage and a query without @placeholder. The same rules
hold in the Hub's layouts. All text here is written for these tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests import fixtures as fx


def refused(cli, task: str, path: Path) -> str:
    """The one-line error of an import of `path` refused with nothing stored."""
    return fx.refused_import(cli, task, path)


def datasets(cli) -> list[tuple[str, str, int]]:
    return [(d["task"], d["split"], d["items"]) for d in cli("datasets", "--format", "json").json()]


# --- WiC: start/end are character offsets into their sentence, the end exclusive ----------------


def wic_row(idx: int, **changes: Any) -> dict[str, Any]:
    """A WiC row whose spans are right: `sentence1[14:18]` and `sentence2[4:8]` are "bank"."""
    row = {
        "word": "bank",
        "sentence1": "We sat on the bank of the river.",
        "sentence2": "The bank raised its rates.",
        "idx": idx,
        "label": idx % 2 == 0,
        "start1": 14,
        "start2": 4,
        "end1": 18,
        "end2": 8,
        "version": 1.1,
    }
    return {**row, **changes}


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"start1": "fourteen"}, "start1 'fourteen' is not an integer"),
        ({"end2": 7.5}, "end2 7.5 is not an integer"),
        ({"start1": None}, "start1 None is not an integer"),
        ({"start2": -1}, "start2 -1 is negative (a character offset into sentence2)"),
        (
            {"start1": 18, "end1": 14},
            "end1 14 is not after start1 18: the span in sentence1 would be reversed",
        ),
        ({"end1": 14}, "end1 14 is not after start1 14: the span in sentence1 would be empty"),
        ({"end1": 33}, "end1 33 is past the end of sentence1, which has 32 characters"),
        (
            {"start2": 30, "end2": 40},
            "end2 40 is past the end of sentence2, which has 26 characters",
        ),
    ],
)
def test_a_wic_span_outside_its_sentence_is_refused(cli, tmp_path: Path, changes, reason):
    path = fx.write_jsonl(tmp_path / "WiC" / "val.jsonl", [wic_row(0), wic_row(1, **changes)])
    told = refused(cli, "WiC", path)
    assert f"{path}:2: {reason}" in told


def test_a_wic_span_may_end_at_its_sentences_last_character(cli, tmp_path: Path):
    """The end is exclusive (as in SuperGLUE's files: `sentence1[start1:end1]` is the word), so
    an end equal to the sentence's length is the last character, not past it."""
    row = wic_row(0, sentence1="We sat by the bank", start1=14, end1=18)
    path = fx.write_jsonl(tmp_path / "WiC" / "val.jsonl", [row])
    result = cli("import", "WiC", path)
    assert result.code == 0, result.stderr
    assert datasets(cli) == [("superglue/wic", "dev", 1)]


def test_a_folder_with_one_malformed_wic_file_leaves_the_store_as_it_was(cli, tmp_path: Path):
    """Imports are one transaction: the train file before the broken val file is not kept, and
    what the store held before is untouched."""
    earlier = fx.write_jsonl(tmp_path / "earlier" / "test.jsonl", [wic_row(7)])
    assert cli("import", "WiC", earlier).code == 0
    folder = tmp_path / "WiC"
    fx.write_jsonl(folder / "train.jsonl", [wic_row(0), wic_row(1)])
    broken = fx.write_jsonl(folder / "val.jsonl", [wic_row(2), wic_row(3), wic_row(4, end2=99)])
    result = cli("import", "WiC", folder)
    assert result.code == 1
    assert f"{broken}:3: end2 99 is past the end of sentence2" in result.stderr
    assert "nothing imported: the 2 files of this import go in together" in result.stderr
    assert datasets(cli) == [("superglue/wic", "test", 1)]


# --- WSC: a span index names a word of the text, split on whitespace ----------------------------


def wsc_row(idx: int, **target: Any) -> dict[str, Any]:
    """A WSC row: 7 words, "Mara" is word 0 and "she" word 4."""
    return {
        "text": "Mara thanked Ines because she had helped.",
        "target": {
            "span2_index": 4,
            "span1_index": 0,
            "span1_text": "Mara",
            "span2_text": "she",
            **target,
        },
        "idx": idx,
        "label": False,
    }


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ({"span2_index": 7}, "span2_index 7 is past the last word of text, which has 7 words"),
        ({"span1_index": 40}, "span1_index 40 is past the last word of text, which has 7 words"),
        ({"span1_index": -2}, "span1_index -2 is negative"),
        ({"span2_index": "four"}, "span2_index 'four' is not an integer"),
    ],
)
def test_a_wsc_span_index_past_its_text_is_refused(cli, tmp_path: Path, target, reason):
    path = fx.write_jsonl(tmp_path / "WSC" / "val.jsonl", [wsc_row(0), wsc_row(1, **target)])
    assert f"{path}:2: {reason}" in refused(cli, "WSC", path)


def test_a_wsc_span_text_unlike_the_words_at_its_index_still_imports(cli, tmp_path: Path):
    """SuperGLUE's own files differ there (case, punctuation, a possessive): only an index
    past the text is refused."""
    rows = [
        wsc_row(0, span1_text="mara"),
        {**wsc_row(1), "text": "Mara's aunt thanked Ines because she had helped."},
        wsc_row(2, span2_text="her"),
    ]
    path = fx.write_jsonl(tmp_path / "WSC" / "val.jsonl", rows)
    result = cli("import", "WSC", path)
    assert result.code == 0, result.stderr
    assert datasets(cli) == [("superglue/wsc", "dev", 3)]


# --- AX-g: the minimal pairs are rows 2k and 2k+1, so the rows come in twos ---------------------


def axg_rows(n: int) -> list[dict[str, Any]]:
    """Rows 2k and 2k+1 share the hypothesis; the premise's pronoun differs; pair_id is
    unique per row, as in the real file."""
    return [
        {
            "hypothesis": f"The clerk had signed form {i // 2}.",
            "idx": i,
            "label": "entailment" if (i // 2) % 2 else "not_entailment",
            "pair_id": 900 + 2 * i,
            "premise": f"The clerk said {'she' if i % 2 else 'he'} had signed form {i // 2}.",
        }
        for i in range(n)
    ]


def test_an_odd_number_of_axg_rows_is_refused_with_the_count(cli, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "AX-g" / "AX-g.jsonl", axg_rows(7))
    assert (
        f"{path}:7: 7 rows, an odd number: AX-g's minimal pairs come in twos (the rows with "
        "idx 2k and 2k+1), and idx 6's partner, idx 7, is not in the file"
    ) in refused(cli, "AX-g", path)


def test_the_axg_row_without_its_partner_is_named(cli, tmp_path: Path):
    """One row gone from the middle of the file: the row left alone is named, not the last."""
    rows = [r for r in axg_rows(8) if r["idx"] != 2]
    path = fx.write_jsonl(tmp_path / "AX-g" / "AX-g.jsonl", rows)
    told = refused(cli, "AX-g", path)
    assert f"{path}:3: 7 rows, an odd number" in told
    assert "idx 3's partner, idx 2, is not in the file" in told


def test_axg_rows_alone_are_refused_even_when_they_make_an_even_number(cli, tmp_path: Path):
    """Rows 2 and 5 gone: eight rows, two of them (3 and 4) without their partner, which
    the parity score would leave out unsaid."""
    rows = [r for r in axg_rows(10) if r["idx"] not in (2, 5)]
    path = fx.write_jsonl(tmp_path / "AX-g" / "AX-g.jsonl", rows)
    told = refused(cli, "AX-g", path)
    assert (
        f"{path}:3: AX-g's minimal pairs come in twos (the rows with idx 2k and 2k+1), and "
        "idx 3's partner, idx 2, is not in the file"
    ) in told
    assert "odd" not in told


def test_an_even_number_of_axg_rows_imports(cli, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "AX-g" / "AX-g.jsonl", axg_rows(8))
    assert cli("import", "AX-g", path).code == 0
    assert datasets(cli) == [("superglue/axg", "test", 8)]


# --- ReCoRD: entity spans inside the passage (inclusive end), @placeholder in every query -------

PASSAGE = "Lena Ortiz scored twice as Harbor City beat Pine Falls.\n@highlight\nHarbor City win"
"""`Lena Ortiz` is 0..9, `Harbor City` 27..37 and `win` 79..81, the last characters."""


def record_row(entities: list[tuple[int, int]], query: str = "@placeholder will play again."):
    return {
        "source": "Test",
        "passage": {"text": PASSAGE, "entities": [{"start": s, "end": e} for s, e in entities]},
        "qas": [
            {
                "query": "The coach praised @placeholder.",
                "idx": 0,
                "answers": [{"start": 0, "end": 9, "text": "Lena Ortiz"}],
            },
            {
                "query": query,
                "idx": 1,
                "answers": [{"start": 27, "end": 37, "text": "Harbor City"}],
            },
        ],
        "idx": 0,
    }


@pytest.mark.parametrize(
    ("entities", "reason"),
    [
        (
            [(0, 9), (27, 37), (79, 82)],
            "entity 3 (79..82) ends past the passage, which has 82 characters (0..81; an "
            "entity's end is inclusive, its last character)",
        ),
        ([(0, 9), (27, 120)], "entity 2 (27..120) ends past the passage, which has 82"),
        ([(-1, 9)], "entity 1 (-1..9) starts before the passage"),
        ([(0, 9), (37, 27)], "entity 2 (37..27) ends before it starts"),
    ],
)
def test_a_record_entity_outside_its_passage_is_refused(cli, tmp_path: Path, entities, reason):
    """Such a span used to be cut to the passage: `Harbor City` past the end became the
    passage's tail, offered as an entity that is not the one the file names."""
    good = record_row([(0, 9), (27, 37)])
    bad = {**record_row(entities), "idx": 1}
    bad["qas"] = [{**q, "idx": q["idx"] + 2} for q in bad["qas"]]
    path = fx.write_jsonl(tmp_path / "ReCoRD" / "val.jsonl", [good, bad])
    assert f"{path}:2: {reason}" in refused(cli, "ReCoRD", path)


def test_a_record_entity_may_end_at_the_passages_last_character(cli, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "ReCoRD" / "val.jsonl", [record_row([(0, 9), (79, 81)])])
    assert cli("import", "ReCoRD", path).code == 0
    assert datasets(cli) == [("superglue/record", "dev", 2)]


def test_a_record_query_without_its_placeholder_is_refused(cli, tmp_path: Path):
    row = record_row([(0, 9), (27, 37)], query="Harbor City will play again.")
    path = fx.write_jsonl(tmp_path / "ReCoRD" / "val.jsonl", [row])
    assert (
        f"{path}:1: query 1 has no @placeholder, the blank the chosen entity fills "
        "(the query is 'Harbor City will play again.')"
    ) in refused(cli, "ReCoRD", path)


# --- a text that is null: no text to show, refused as a missing one ---------------------------


def test_a_null_premise_is_refused_not_shown_as_none(cli, tmp_path: Path):
    rows = [
        {"premise": "The kettle boiled.", "hypothesis": "It boiled.", "idx": 0, "label": "neutral"},
        {"premise": None, "hypothesis": "It boiled.", "idx": 1, "label": "neutral"},
    ]
    path = fx.write_jsonl(tmp_path / "val.jsonl", rows)
    assert f"{path}:2: 'premise' is null: the item would have no premise" in refused(
        cli, "CB", path
    )


@pytest.mark.parametrize("premise", ["", "  \t "])
def test_an_empty_premise_is_refused_not_kept(cli, tmp_path: Path, premise: str):
    """An empty premise was kept silently: the annotator would have had nothing to judge."""
    rows = [
        {"premise": "The kettle boiled.", "hypothesis": "It boiled.", "idx": 0, "label": "neutral"},
        {"premise": premise, "hypothesis": "It boiled.", "idx": 1, "label": "neutral"},
    ]
    path = fx.write_jsonl(tmp_path / "val.jsonl", rows)
    assert f"{path}:2: premise is empty: the item would have no premise" in refused(cli, "CB", path)


def test_an_empty_sentence_in_a_table_is_refused(cli, tmp_path: Path):
    path = tmp_path / "dev.tsv"
    path.write_text("sentence\tlabel\nA warm and funny film.\t1\n\t0\n", encoding="utf-8")
    assert f"{path}:3: sentence is empty: the item would have no sentence" in refused(
        cli, "SST-2", path
    )


# --- AX, AX-b: a diagnostic's tags are the GLUE taxonomy's, each under its own category -------

AX_HEADER = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"


def ax_file(path: Path, logic: str, structure: str = "") -> Path:
    """A diagnostic-full.tsv of two rows, the second with these Logic and structure cells."""
    rows = [
        ["", "", "Negation", "", "News", "A man runs.", "A man does not run.", "contradiction"],
        ["", structure, logic, "", "News", "The cat slept.", "The cat did not sleep.", "neutral"],
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\r\n".join([AX_HEADER, *("\t".join(r) for r in rows)]) + "\r\n")
    return path


@pytest.mark.parametrize(
    ("logic", "structure", "reason"),
    [
        ("Negations", "", "3: unknown tag 'Negations'; did you mean 'Negation'?"),
        ("", "Negation", "3: tag 'Negation' belongs to Logic, not to Predicate-Argument Structure"),
    ],
)
def test_a_diagnostic_tag_outside_the_taxonomy_is_refused(
    cli, tmp_path: Path, logic, structure, reason
):
    """A misspelt tag, or one under another category, was imported and scored as a phenomenon
    of its own in the report, where `curate import` refuses the same file: `import` and
    `score --gold` refuse it too, naming the line."""
    path = ax_file(tmp_path / "ax" / "diagnostic-full.tsv", logic, structure)
    assert f"{path.name}:{reason}" in refused(cli, "glue/ax", path)
    predictions = tmp_path / "model" / "AX.tsv"
    predictions.parent.mkdir()
    predictions.write_text("index\tprediction\n0\tcontradiction\n1\tneutral\n")
    result = cli("score", predictions, "--gold", path)
    assert result.code == 1 and f"{path.name}:{reason}" in result.stderr


def test_a_diagnostic_with_the_taxonomys_tags_imports(cli, tmp_path: Path):
    path = ax_file(tmp_path / "ax" / "diagnostic-full.tsv", "Negation;Universal")
    assert cli("import", "glue/ax", path).code == 0
    assert datasets(cli) == [("glue/ax", "test", 2)]


def test_a_list_where_the_task_has_text_is_refused_not_stored(cli, tmp_path: Path):
    """A premise of ["The kettle", "boiled."] was stored as a list and shown in brackets."""
    rows = [
        {"premise": "The kettle boiled.", "hypothesis": "It boiled.", "idx": 0, "label": "neutral"},
        {
            "premise": ["The kettle", "boiled."],
            "hypothesis": "It boiled.",
            "idx": 1,
            "label": "neutral",
        },
    ]
    path = fx.write_jsonl(tmp_path / "val.jsonl", rows)
    assert (
        f"{path}:2: premise is a list (['The kettle', 'boiled.']) where superglue/cb has text"
        in refused(cli, "CB", path)
    )
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    parquet = tmp_path / "hub" / "validation-00000-of-00001.parquet"
    parquet.parent.mkdir()
    columns = {
        "premise": [["a"], ["The kettle", "boiled."]],
        "hypothesis": ["It boiled.", "It boiled."],
        "idx": [0, 1],
        "label": [0, 1],
    }
    pq.write_table(pa.table(columns), parquet)
    assert (
        f"{parquet}:1: premise is a list (['a']) where superglue/cb has text"
        in fx.refused_import(
            cli, "CB", parquet, "--label-names", "entailment,contradiction,neutral"
        )
    )


# --- the same rules in the Hub's layouts --------------------------------------------------------


@pytest.fixture
def hub():
    pytest.importorskip("datasets")
    from datasets.utils.logging import disable_progress_bar

    from tests import hub_fixtures

    disable_progress_bar()
    return hub_fixtures


@pytest.mark.parametrize(
    ("config", "task", "rows", "reason"),
    [
        (
            "wic",
            "WiC",
            [wic_row(0), wic_row(1, end1=40)],
            "2: end1 40 is past the end of sentence1",
        ),
        ("wsc", "WSC", [wsc_row(0), wsc_row(1, span2_index=9)], "2: span2_index 9 is past the"),
        ("axg", "AX-g", axg_rows(5), "5: 5 rows, an odd number"),
    ],
)
def test_the_hubs_rows_are_checked_alike(cli, tmp_path: Path, hub, config, task, rows, reason):
    """Parquet files as the Hub has them: flat columns, integer offsets and indices."""
    data = hub.hub_dataset(rows, hub.SUPER_GLUE[config])
    path = hub.write_parquet(data, tmp_path / config / "validation-00000-of-00001.parquet")
    assert f"{path}:{reason}" in refused(cli, task, path)


def test_the_hubs_record_query_without_its_placeholder_is_refused(cli, tmp_path: Path, hub):
    rows = [record_row([(0, 9), (27, 37)], query="Harbor City will play again.")]
    path = hub.write_parquet(
        hub.record_dataset(rows), tmp_path / "record" / "validation-00000-of-00001.parquet"
    )
    assert f"{path}:2: query 1 has no @placeholder" in refused(cli, "ReCoRD", path)


# --- `annotate score --gold` reads its gold file by the same rules as an import ----------------


@pytest.mark.parametrize(
    ("task", "gold_name", "rows", "prediction", "reason"),
    [
        ("WiC", "val.jsonl", [wic_row(0), wic_row(1, end1=40)], "true", "2: end1 40 is past"),
        ("WSC", "val.jsonl", [wsc_row(0), wsc_row(1, span2_index=9)], "true", "2: span2_index 9"),
        ("AX-g", "AX-g.jsonl", axg_rows(5), "entailment", "5: 5 rows, an odd number"),
    ],
)
def test_a_malformed_gold_file_is_refused_by_score(
    cli, tmp_path: Path, task, gold_name, rows, prediction, reason
):
    """A gold file an import refuses is no file to score against: it was scored as given."""
    gold = fx.write_jsonl(tmp_path / "gold" / task / gold_name, rows)
    predictions = fx.write_jsonl(
        tmp_path / "model" / f"{task}.jsonl",
        [{"idx": r["idx"], "label": prediction} for r in rows],
    )
    result = cli("score", predictions, "--gold", gold)
    assert result.code == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert f"{gold}:{reason}" in result.stderr


def test_every_error_about_one_file_names_it_as_the_user_typed_it(cli, tmp_path: Path, monkeypatch):
    """`annotate import SST-2 films/dev.tsv`: a row the reader refuses was named
    `films/dev.tsv:3`, an empty sentence, a file of no items, a split it cannot tell and a
    refused --replace `/abs/path/films/dev.tsv`. One file, one name: as typed."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "films"
    folder.mkdir()
    (folder / "dev.tsv").write_text("sentence\tlabel\nA warm film.\t1\n\t0\n", encoding="utf-8")
    (folder / "none.tsv").write_text("sentence\tlabel\n", encoding="utf-8")
    (folder / "other.tsv").write_text("sentence\tlabel\nA film.\t1\n", encoding="utf-8")
    said = [
        fx.refused_import(cli, "SST-2", "films/dev.tsv"),
        fx.refused_import(cli, "SST-2", "films/none.tsv", "--split", "dev"),
        fx.refused_import(cli, "SST-2", "films/other.tsv"),
    ]
    assert said[0].startswith("error: films/dev.tsv:3: sentence is empty"), said[0]
    assert said[1].startswith("error: films/none.tsv: the file has no items"), said[1]
    assert said[2].startswith("error: films/other.tsv: cannot tell which split"), said[2]
    assert not any(str(tmp_path) in s for s in said)
