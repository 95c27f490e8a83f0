"""Import a diagnostic file into a set and export it again: the round trip on original fixtures
(the real files are in tests/integration/test_curation_real.py), and the way back into the
human protocol as a task dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate import specs
from annotate.curation.examples import (
    ExampleQuery,
    edit_example,
    find_examples,
    save_pair,
    set_retired,
)
from annotate.curation.export import export_set
from annotate.curation.importing import import_diagnostic
from annotate.curation.sets import create_set, load_set
from annotate.curation.stats import set_statistics
from annotate.curation.validation import PairDraft
from annotate.errors import DataFileError, UserError
from annotate.formats.importer import import_file
from annotate.formats.readers import FileSummary, read_items
from annotate.protocol.studies import create_study
from annotate.report.build import study_report
from annotate.simulate import simulate

HEADER = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"
ROWS = [
    # Written for these tests: every quirk of the real file in a few rows. Multi-tag cells
    # (`;`, no space), empty cells, a row without tags, a trailing space, non-ASCII text,
    # brackets that look like markup, and two rows that are not a pair.
    "\t\tNegation\t\tArtificial\tThe gate is open.\tThe gate is not open.\tcontradiction",
    "\t\tNegation\t\tArtificial\tThe gate is not open.\tThe gate is open.\tcontradiction",
    "Quantifiers;Lexical entailment\tActive/Passive\t\t\tNews\tAll ten boats were repaired by the crew.\tThe crew repaired some boats. \tentailment",
    "Quantifiers;Lexical entailment\tActive/Passive\t\t\tNews\tThe crew repaired some boats. \tAll ten boats were repaired by the crew.\tneutral",
    "\t\t\tWorld knowledge\tWikipedia\tZoë’s café — in Reykjavík — opened in 2019.\tZoë’s café is in Iceland.\tentailment",
    "\t\t\t\tReddit\t[CLS] the [MASK] sat [/foo]\t[bold]the cat[/bold] sat\tneutral",
    "Named entities\tCore args;Datives\tConditionals;Temporal\tCommon sense\tACL\tIf Ana gives Ben the map, he will leave.\tBen will leave.\tneutral",
]
FIXTURE = ("\r\n".join([HEADER, *ROWS]) + "\r\n").encode()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def glue_rows(path: Path) -> list[tuple]:
    """Each row as the glue/ax reader sees it: premise, hypothesis, label, tag set per category."""
    spec = specs.load_task("glue/ax")
    return [
        (
            item.fields["premise"],
            item.fields["hypothesis"],
            item.gold,
            item.fields["domain"],
            {c: frozenset(t) for c, t in (item.tags or {}).items()},
        )
        for item in read_items(path, spec, FileSummary())
    ]


def test_fixture_round_trip_is_byte_identical(workspace, tmp_path):
    source = write(tmp_path / "in" / "diagnostic-full.tsv", FIXTURE)
    summary = import_diagnostic(workspace.engine, "fixture", source, "glue-team")
    assert (summary.created, summary.rows, summary.pairs) == (True, 7, 2)
    assert summary.labels == {"contradiction": 2, "entailment": 2, "neutral": 3}
    examples = find_examples(workspace.engine, "fixture", ExampleQuery())
    assert [e.pair_id for e in examples] == [1, 1, 2, 2, None, None, None]
    assert examples[2].hypothesis.endswith("boats. ")  # trailing space kept
    assert examples[2].tags["Lexical Semantics"] == ["Quantifiers", "Lexical entailment"]
    assert examples[5].fine_tags == [] and examples[5].author == "glue-team"
    out = export_set(workspace.engine, "fixture", tmp_path / "out.tsv")
    assert (out.rows, out.format, out.task) == (7, "glue", "glue/ax")
    assert (tmp_path / "out.tsv").read_bytes() == FIXTURE
    assert glue_rows(tmp_path / "out.tsv") == glue_rows(source)


def test_the_same_file_is_imported_once(workspace, tmp_path):
    source = write(tmp_path / "diagnostic-full.tsv", FIXTURE)
    import_diagnostic(workspace.engine, "fixture", source)
    again = import_diagnostic(workspace.engine, "fixture", source)
    assert again.already_imported and not again.created and again.rows == 0
    assert len(find_examples(workspace.engine, "fixture", ExampleQuery())) == 7
    assert load_set(workspace.engine, "fixture").sources[0]["rows"] == 7


def test_pairs_already_in_the_set_are_skipped_and_counted(workspace, tmp_path):
    engine = workspace.engine
    import_diagnostic(engine, "fixture", write(tmp_path / "d.tsv", FIXTURE))
    # The set's own export, after an edit (so not the same file): nothing new in it.
    edit_example(engine, "fixture", 1, "ana", {"domain": "News"})
    export_set(engine, "fixture", tmp_path / "export.tsv")
    again = import_diagnostic(engine, "fixture", tmp_path / "export.tsv")
    assert (again.already_imported, again.rows, again.pairs) == (False, 0, 0)
    assert (again.skipped, again.skipped_pairs) == (7, 2)
    # A file sharing a pair (spaced and encoded otherwise, in the other order) and an
    # unpaired row with the set, with one new pair and one new row.
    gate_reversed = [row.replace("is open.", "is  open.") for row in (ROWS[1], ROWS[0])]
    new_pair = [
        "\t\tNegation\t\tNews\tThe door is shut.\tThe door is not shut.\tcontradiction",
        "\t\tNegation\t\tNews\tThe door is not shut.\tThe door is shut.\tcontradiction",
    ]
    cafe = ROWS[4].replace("é", "e\u0301")
    new_row = "\t\t\tWorld knowledge\tNews\tZoë sings.\tZoë makes a sound.\tentailment"
    mixed = "\r\n".join([HEADER, *gate_reversed, *new_pair, cafe, new_row]) + "\r\n"
    summary = import_diagnostic(engine, "fixture", write(tmp_path / "m.tsv", mixed.encode()))
    assert (summary.rows, summary.pairs, summary.skipped, summary.skipped_pairs) == (3, 1, 3, 1)
    examples = find_examples(engine, "fixture", ExampleQuery())
    assert [(e.pair_id, e.premise) for e in examples[7:]] == [
        (3, "The door is shut."),
        (3, "The door is not shut."),
        (None, "Zoë sings."),
    ]
    assert set_statistics(engine, "fixture")["duplicates"] == 0
    sources = load_set(engine, "fixture").sources
    assert [(s["file"], s["rows"], s["skipped"]) for s in sources[1:]] == [
        ("export.tsv", 0, 7),
        ("m.tsv", 3, 3),
    ]
    # Nothing came in twice, so a retired pair comes back.
    set_retired(engine, "fixture", 1, "ana", True)
    assert set_retired(engine, "fixture", 1, "ana", False).retired is False


def test_superglue_export_collapses_labels_and_writes_only_present_tag_keys(workspace, tmp_path):
    import_diagnostic(workspace.engine, "fixture", write(tmp_path / "d.tsv", FIXTURE))
    export_set(workspace.engine, "fixture", tmp_path / "AX-b.jsonl", "superglue")
    raw = (tmp_path / "AX-b.jsonl").read_bytes()
    assert raw.endswith(b"}\n") and b"\r" not in raw
    records = [json.loads(line) for line in raw.decode().splitlines()]
    assert [r["idx"] for r in records] == [str(n) for n in range(7)]  # JSON strings
    assert [r["label"] for r in records] == [
        "not_entailment",
        "not_entailment",
        "entailment",
        "not_entailment",
        "entailment",
        "not_entailment",
        "not_entailment",
    ]
    assert list(records[0]) == ["idx", "label", "sentence1", "sentence2", "logic"]
    assert list(records[5]) == ["idx", "label", "sentence1", "sentence2"]
    assert records[6]["predicate-argument-structure"] == "Core args;Datives"
    assert "\\u00eb" in raw.decode()  # ASCII escapes, as the original AX-b.jsonl
    # And it reads back as a two-way set, which exports to the same bytes.
    import_diagnostic(workspace.engine, "two-way", tmp_path / "AX-b.jsonl")
    assert load_set(workspace.engine, "two-way").scheme == "two-way"
    export_set(workspace.engine, "two-way", tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == raw
    with pytest.raises(UserError, match="two-way labels"):
        export_set(workspace.engine, "two-way", tmp_path / "x.tsv", "glue")
    with pytest.raises(UserError, match="has three-way labels but this file has two-way"):
        import_diagnostic(workspace.engine, "fixture", tmp_path / "AX-b.jsonl")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("index\tsentence1\tsentence2\r\n0\tA b.\tA c.\r\n", ":2: no label"),
        (
            f"{HEADER}\r\n\t\tNegatoin\t\tNews\tA b.\tA c.\tneutral\r\n",
            ":2: unknown tag 'Negatoin'",
        ),
        (
            f"{HEADER}\r\nNegation\t\t\t\tNews\tA b.\tA c.\tneutral\r\n",
            ":2: tag 'Negation' belongs to Logic",
        ),
        (f"{HEADER}\r\n\t\tNegation\t\tNews\tA b.\tA c.\tmaybe\r\n", ":2: unknown label 'maybe'"),
        (
            f"{HEADER}\r\n\t\tNegation\t\tNe\rws\tA b.\tA c.\tneutral\r\n",
            ":2: the domain holds a tab or line break",
        ),
        # A pair needs both sentences, imported as written: an empty cell is not a sentence.
        (
            f"{HEADER}\r\n\t\tNegation\t\tNews\tA b.\tA c.\tneutral\r\n"
            "\t\tNegation\t\tNews\t \tA b.\tneutral\r\n",
            ":3: the premise is empty",
        ),
        (
            f"{HEADER}\r\n\t\tNegation\t\tNews\tA b.\t\u200b\tneutral\r\n",
            ":2: the hypothesis is empty",
        ),
    ],
)
def test_a_bad_file_names_the_line_and_stores_nothing(workspace, tmp_path, text, message):
    path = write(tmp_path / "bad.tsv", text.encode())
    with pytest.raises(DataFileError, match=message):
        import_diagnostic(workspace.engine, "bad", path)
    with pytest.raises(UserError, match="no curation set"):
        load_set(workspace.engine, "bad")


def test_a_folder_is_named_as_a_folder_not_as_a_missing_file(workspace, tmp_path):
    (tmp_path / "AX-b").mkdir()
    with pytest.raises(UserError) as caught:
        import_diagnostic(workspace.engine, "d", tmp_path / "AX-b")
    assert str(caught.value) == (
        f"{tmp_path / 'AX-b'} is a folder: name the diagnostic file in it "
        "(diagnostic-full.tsv or AX-b.jsonl)"
    )
    with pytest.raises(UserError, match="no curation set"):
        load_set(workspace.engine, "d")


def test_an_ax_b_row_without_its_second_sentence_is_refused(workspace, tmp_path):
    rows = [
        {"idx": "0", "label": "entailment", "sentence1": "A b.", "sentence2": "A c."},
        {"idx": "1", "label": "entailment", "sentence1": "A c.", "sentence2": ""},
    ]
    path = write(tmp_path / "AX-b.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    with pytest.raises(DataFileError, match=r"AX-b\.jsonl:2: the hypothesis is empty"):
        import_diagnostic(workspace.engine, "bad", path)
    with pytest.raises(UserError, match="no curation set"):
        load_set(workspace.engine, "bad")


def test_export_leaves_retired_examples_out_and_is_deterministic(workspace, tmp_path):
    import_diagnostic(workspace.engine, "fixture", write(tmp_path / "d.tsv", FIXTURE))
    set_retired(workspace.engine, "fixture", 6, "ana", True)
    export_set(workspace.engine, "fixture", tmp_path / "a.tsv")
    export_set(workspace.engine, "fixture", tmp_path / "b.tsv")
    assert (tmp_path / "a.tsv").read_bytes() == (tmp_path / "b.tsv").read_bytes()
    assert len(glue_rows(tmp_path / "a.tsv")) == 6
    assert b"[CLS]" not in (tmp_path / "a.tsv").read_bytes()
    with pytest.raises(UserError, match="no folder"):
        export_set(workspace.engine, "fixture", tmp_path / "missing" / "a.tsv")


def test_an_authored_pair_is_exported_and_runs_through_a_human_study(workspace, tmp_path):
    """The acceptance path: write a pair, export, import as glue/ax, run the protocol, and get
    the per-phenomenon report."""
    engine = workspace.engine
    create_set(engine, "mine")
    save_pair(
        engine,
        "mine",
        "ana",
        PairDraft(
            premise="The ferry leaves before noon.",
            hypothesis="The ferry leaves after noon.",
            forward="contradiction",
            backward="contradiction",
            tags=["Temporal", "Lexical entailment"],
            domain="Artificial",
        ),
    )
    save_pair(
        engine,
        "mine",
        "ana",
        PairDraft(
            premise="Every guest brought a dish.",
            hypothesis="Some guest brought a dish.",
            forward="entailment",
            backward="neutral",
            tags=["Universal", "Quantifiers"],
            domain="News",
        ),
    )
    path = tmp_path / "mine.tsv"
    export_set(engine, "mine", path)
    lines = path.read_bytes().split(b"\r\n")
    assert lines[1] == (
        b"Lexical entailment\t\tTemporal\t\tArtificial\tThe ferry leaves before noon.\t"
        b"The ferry leaves after noon.\tcontradiction"
    )
    assert lines[2].endswith(
        b"The ferry leaves after noon.\tThe ferry leaves before noon.\tcontradiction"
    )
    assert lines[4].startswith(b"Quantifiers\t\tUniversal\t\tNews\tSome guest")
    assert lines[4].endswith(b"\tneutral")

    dataset = import_file(engine, specs.load_task("glue/ax"), path, split="test")
    assert dataset.n_items == 4
    create_study(
        engine,
        "mine-study",
        "glue/ax",
        "quick",
        overrides={"training_items": 0, "test_sample": "all"},
    )
    simulate(engine, "mine-study", annotators=5, accuracy=0.9, seed=3)
    report = study_report(engine, "mine-study", bootstrap=0).to_json()
    diagnostics = report["diagnostics"]
    assert diagnostics["n_tagged_items"] == 4
    assert set(diagnostics["coarse"]) == {"Lexical Semantics", "Logic"}
    assert set(diagnostics["fine"]["Logic"]) == {"Temporal", "Universal"}
