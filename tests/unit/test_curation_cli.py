"""`annotate curate COMMAND SET …` as a user runs it: clear errors, JSON for programs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import SQLModel

from annotate.cli.curate import curate_app
from annotate.store.curation_models import CURATION_TABLES
from annotate.workspace import open_workspace
from tests import fixtures as fx


def write_diagnostic(tmp_path: Path) -> Path:
    path = tmp_path / "diagnostic-full.tsv"
    path.write_text(fx.DIAGNOSTIC_FULL, encoding="utf-8", newline="")
    return path


def test_import_list_stats_and_export(cli, tmp_path):
    source = write_diagnostic(tmp_path)
    result = cli("curate", "import", "d", source, "--as", "glue")
    assert result.code == 0, result.stderr
    assert "4 examples (2 pairs" in " ".join(result.stdout.split())
    assert "already imported" in cli("curate", "import", "d", source).stderr

    rows = cli("curate", "list", "d", "--format", "json").json()
    assert [r["label"] for r in rows] == ["contradiction", "contradiction", "entailment", "neutral"]
    assert rows[0]["author"] == "glue"
    assert [
        r["id"] for r in cli("curate", "list", "d", "--tag", "negation", "--format", "json").json()
    ] == [1, 2]
    assert [
        r["id"]
        for r in cli(
            "curate", "list", "d", "--search", "boats", "--label", "neutral", "--format", "json"
        ).json()
    ] == [4]
    assert cli("curate", "list", "d", "--tag", "Predicate-Argument Structure").stdout.startswith(
        "1 example in d"
    )

    stats = cli("curate", "stats", "d", "--format", "json").json()
    assert {c: v["count"] for c, v in stats["coarse"].items()} == {
        "Lexical Semantics": 1,
        "Predicate-Argument Structure": 1,
        "Logic": 2,
        "Knowledge": 1,
    }
    table = cli("curate", "stats", "d").stdout
    assert "Examples per coarse category" in table and "Second opinions" in table

    out = tmp_path / "out.tsv"
    result = cli("curate", "export", "d", out)
    assert result.code == 0 and "annotate import glue/ax" in " ".join(result.stdout.split())
    assert out.read_bytes().decode("utf-8") == fx.DIAGNOSTIC_FULL
    assert cli("curate", "export", "d", tmp_path / "o.jsonl", "--format", "superglue").code == 0
    assert (tmp_path / "o.jsonl").read_text().count("\n") == 4


def test_create_edit_show_retire_restore(cli, tmp_path):
    assert "created (entailment, neutral, contradiction)" in cli("curate", "create", "d").stdout
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    edited = cli(
        "curate",
        "edit",
        "d",
        "3",
        "--as",
        "ana",
        "--set",
        "label=neutral",
        "--set",
        "tags=Quantifiers;world knowledge",
        "--reason",
        "weaker",
        "--format",
        "json",
    ).json()
    assert edited["version"] == 2 and edited["label"] == "neutral"
    assert edited["tags"]["Knowledge"] == ["World knowledge"]
    shown = cli("curate", "show", "d", "3", "--format", "json").json()
    assert [h["label"] for h in shown["history"]] == ["entailment", "neutral"]
    assert shown["history"][0]["change_note"] == "weaker"
    assert "weaker" in cli("curate", "show", "d", "3").stdout

    retired = cli("curate", "retire", "d", "3", "--as", "ana", "--reason", "x").stdout
    assert "example 3 and its reverse, example 4, retired" in " ".join(retired.split())
    assert len(cli("curate", "list", "d", "--format", "json").json()) == 2
    assert [
        r["id"] for r in cli("curate", "list", "d", "--retired", "--format", "json").json()
    ] == [3, 4]
    assert "active again" in cli("curate", "restore", "d", "3", "--as", "ana").stdout
    assert "0 open disagreements in d" in cli("curate", "queue", "d").stdout
    assert cli("curate", "queue", "d", "--format", "json").json() == []
    sets = cli("curate", "sets", "--format", "json").json()
    assert sets == [
        {**sets[0], "name": "d", "labels": "three-way", "examples": 4, "retired": 0},
    ]


def test_an_edit_of_the_note_does_not_say_it_changed_the_sentences(cli, tmp_path):
    """A sentence edit flags the label "to check"; a later edit of the note alone, with the
    label still unchecked, said the same words, "(the sentences changed)", as if this edit
    had changed them: it says the label is still to check, and how to confirm it."""
    cli("curate", "create", "d")
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    shown = cli("curate", "show", "d", "3", "--format", "json").json()["example"]
    moved = cli(
        "curate", "edit", "d", "3", "--as", "ana", "--set", f"premise={shown['premise']} Again."
    ).stdout
    assert "its label is flagged to check (the sentences changed)" in " ".join(moved.split())
    noted = " ".join(
        cli("curate", "edit", "d", "3", "--as", "ana", "--set", "note=seen").stdout.split()
    )
    assert "the sentences changed)" not in noted
    assert "its label is still to check" in noted and "--set label=... confirms it" in noted


def test_mistakes_get_one_clear_line(cli, tmp_path):
    assert "no annotate store" in cli("curate", "stats", "nope").stderr  # nothing created
    cli("curate", "create", "d")
    assert "no curation set named 'nope'" in cli("curate", "stats", "nope").stderr
    assert "add --as NAME" in cli("curate", "retire", "d", "1").stderr
    assert "add --as NAME" in cli("curate", "review", "d").stderr
    assert (
        "export writes glue or superglue"
        in cli("curate", "export", "d", tmp_path / "x", "--format", "json").stderr
    )
    assert "use table or json" in cli("curate", "stats", "d", "--format", "glue").stderr
    assert "no active examples" in cli("curate", "export", "d", tmp_path / "x.tsv").stderr
    assert (
        "unknown tag 'Negatoin'; did you mean 'Negation'"
        in cli("curate", "list", "d", "--tag", "Negatoin").stderr
    )
    assert "exists already" in cli("curate", "create", "d").stderr
    assert "Missing argument 'SET'" in cli("curate", "stats").stderr
    assert "no example 7" in cli("curate", "show", "d", "7").stderr
    assert "no curation set named 'nope'" in cli("curate", "author", "nope", "--as", "ana").stderr


def test_curator_names_are_trimmed_and_a_blank_one_is_refused(cli, db_url, tmp_path):
    from annotate.curation.desk import CurationDesk
    from annotate.curation.review import next_for_review

    assert cli("curate", "import", "d", write_diagnostic(tmp_path), "--as", " lea ").code == 0
    rows = cli("curate", "list", "d", "--format", "json").json()
    assert {r["author"] for r in rows} == {"lea"}
    assert cli("curate", "list", "d", "--author", "lea", "--format", "json").json() == rows
    # lea is never served her own examples to review, however her name was typed.
    engine = open_workspace(db_url).engine
    assert next_for_review(engine, "d", "lea") is None
    assert next_for_review(engine, "d", " lea") is None
    assert CurationDesk.open(engine, "d", "le\u0301a ").curator == "l\u00e9a"  # the screens

    blank = cli("curate", "edit", "d", "1", "--as", "   ", "--set", "note=x")
    assert blank.code == 1
    assert blank.stderr.strip() == (
        "error: a curator name cannot be blank: say who you are with --as NAME"
    )
    assert cli("curate", "show", "d", "1", "--format", "json").json()["example"]["version"] == 1
    assert cli("curate", "retire", "d", "1", "--as", "\t").code == 1
    # One Unicode form: "léa" typed with a combining accent is "léa".
    assert cli("curate", "edit", "d", "1", "--as", "le\u0301a ", "--set", "note=x").code == 0
    history = cli("curate", "show", "d", "1", "--format", "json").json()["history"]
    assert [h["made_by"] for h in history] == ["lea", "l\u00e9a"]


def test_curator_names_in_another_letter_case_are_the_name_first_recorded(cli, tmp_path):
    lea = "L\u00e9a"
    assert cli("curate", "import", "d", write_diagnostic(tmp_path), "--as", lea).code == 0
    rows = cli("curate", "list", "d", "--format", "json").json()
    for typed in ("L\u00c9A", "le\u0301a"):
        assert cli("curate", "list", "d", "--author", typed, "--format", "json").json() == rows
    assert cli("curate", "edit", "d", "1", "--as", "L\u00c9A", "--set", "note=x").code == 0
    history = cli("curate", "show", "d", "1", "--format", "json").json()["history"]
    assert [h["made_by"] for h in history] == [lea, lea]  # shown as first recorded
    stats = cli("curate", "stats", "d", "--format", "json").json()
    assert list(stats["authors"]) == [lea]


def test_a_domain_the_export_cannot_hold_is_refused_at_edit_time(cli, tmp_path):
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    result = cli("curate", "edit", "d", "1", "--as", "lea", "--set", "domain=a\tb")
    assert result.code == 1
    assert result.stderr == (
        "error: the domain holds a tab or line break, which the GLUE TSV layout cannot hold\n"
    )
    assert cli("curate", "show", "d", "1", "--format", "json").json()["example"]["version"] == 1
    assert cli("curate", "export", "d", tmp_path / "out.tsv").code == 0


@pytest.mark.parametrize(
    ("name", "flags", "told"),
    [
        ("new-ax.jsonl", [], "the glue layout is TSV; name the file .tsv"),
        ("new-ax.tsv", ["--format", "superglue"], "the superglue layout is JSON lines"),
    ],
)
def test_an_export_named_for_the_other_layout_is_refused(cli, tmp_path, name, flags, told):
    """The name decides how the file is read back (`curate import`, `annotate import glue/ax`):
    TSV under a .jsonl name, or JSON lines under a .tsv name, would not import again."""
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    result = cli("curate", "export", "d", tmp_path / name, *flags)
    assert result.code == 1
    assert result.stderr.startswith(f"error: {tmp_path / name}: {told}")
    assert not (tmp_path / name).exists()


def test_a_two_way_sets_export_imports_back(cli, tmp_path):
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    assert cli("curate", "export", "d", tmp_path / "AX-b.jsonl", "--format", "superglue").code == 0
    assert cli("curate", "import", "two", tmp_path / "AX-b.jsonl").code == 0
    assert (
        "JSON lines; name the file .jsonl"
        in cli("curate", "export", "two", tmp_path / "t.tsv").stderr
    )
    result = cli("curate", "export", "two", tmp_path / "again.jsonl")
    assert result.code == 0, result.stderr
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "AX-b.jsonl").read_bytes()


def test_tags_joined_by_a_comma_are_named_as_several_not_matched_to_one(cli, tmp_path):
    """ "Negation, Quantifiers" is two tags written with the wrong separator: the error says so
    and how to write them, instead of suggesting the one tag it resembles."""
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    result = cli("curate", "edit", "d", "1", "--as", "lea", "--set", "tags=Negation, quantifiers")
    assert result.code == 1
    assert result.stderr == (
        "error: unknown tag 'Negation, quantifiers': it is 2 tags; give one, or where several"
        " are taken, separate them with ';' (Negation;Quantifiers)\n"
    )
    assert cli("curate", "show", "d", "1", "--format", "json").json()["example"]["version"] == 1
    listed = cli("curate", "list", "d", "--tag", "Negation;Quantifiers").stderr
    assert "it is 2 tags; give one" in listed and "did you mean" not in listed


def test_a_label_in_another_letter_case_filters_as_a_tag_does(cli, tmp_path):
    cli("curate", "import", "d", write_diagnostic(tmp_path))

    def ids(*options: str) -> list[int]:
        return [r["id"] for r in cli("curate", "list", "d", *options, "--format", "json").json()]

    assert ids("--label", " Neutral") == ids("--label", "neutral") == [4]
    assert ids("--tag", "NEGATION") == ids("--tag", "Negation")
    assert "unknown label 'neutrl'" in cli("curate", "list", "d", "--label", "neutrl").stderr


def test_importing_the_sets_own_export_adds_no_duplicate(cli, tmp_path):
    cli("curate", "import", "d", write_diagnostic(tmp_path))
    cli("curate", "edit", "d", "1", "--as", "lea", "--set", "domain=News")
    cli("curate", "export", "d", tmp_path / "out.tsv")
    result = cli("curate", "import", "d", tmp_path / "out.tsv")
    assert result.code == 0
    assert " ".join(result.stderr.split()) == (
        f"{tmp_path / 'out.tsv'}: nothing imported into set 'd'; 4 examples (2 pairs) "
        "skipped: already in the set"
    )
    assert len(cli("curate", "list", "d", "--format", "json").json()) == 4
    assert cli("curate", "stats", "d", "--format", "json").json()["duplicates"] == 0
    # A file with one pair of the set and one new pair: the new one comes in, the count says so.
    lines = fx.DIAGNOSTIC_FULL.splitlines(keepends=True)
    new = lines[1].replace("gate", "door"), lines[2].replace("gate", "door")
    (tmp_path / "mixed.tsv").write_text("".join([lines[0], *lines[1:3], *new]), newline="")
    result = cli("curate", "import", "d", tmp_path / "mixed.tsv")
    assert " ".join(result.stdout.split()).endswith(
        f"imported from {tmp_path / 'mixed.tsv'}; 2 examples (1 pair) skipped: already in the set"
    )
    assert len(cli("curate", "list", "d", "--format", "json").json()) == 6
    cli("curate", "retire", "d", "1", "--as", "lea")
    assert cli("curate", "restore", "d", "1", "--as", "lea").code == 0


def test_the_taxonomy_is_printed(cli):
    out = " ".join(cli("curate", "tags").stdout.split())
    assert "Predicate-Argument Structure" in out and "Genitives/Partitives" in out


def test_a_store_made_before_curation_gets_its_tables(cli, db_url):
    ws = open_workspace(db_url, create=True)
    SQLModel.metadata.drop_all(ws.engine, tables=list(reversed(CURATION_TABLES)))
    ws.engine.dispose()
    assert cli("curate", "create", "d").code == 0
    assert cli("curate", "sets", "--format", "json").json()[0]["name"] == "d"


# --- one subcommand per mode ---------------------------------------------------------------------

COMMANDS = [command.name for command in curate_app.registered_commands]


def test_the_group_help_lists_every_command(cli):
    result = cli("curate", "--help")
    assert result.code == 0
    assert len(COMMANDS) == 15
    for command in COMMANDS:
        assert re.search(rf"^  {command} +\S", result.stdout, re.MULTILINE), command


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_shows_a_one_line_example_in_its_help(cli, command):
    result = cli("curate", command, "--help")
    assert result.code == 0
    # `annotate curate COMMAND` first, then the set name (but for `sets` and `tags`), on a line
    # of its own right under "Example:": click must not have re-wrapped it.
    example = re.search(r"^ *Example:\n +(annotate curate .+)$", result.stdout, re.MULTILINE)
    assert example is not None, result.stdout
    words = example.group(1).split()
    assert words[:3] == ["annotate", "curate", command]
    if command not in ("sets", "tags"):
        assert not words[3].startswith("-")  # the set name


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            ["d", "--import", "diagnostic-full.tsv", "--as", "glue"],
            "import d diagnostic-full.tsv --as glue",
        ),
        (["d", "--as", "lea"], "author d --as lea"),
        (["d", "--as", "sam", "--review"], "review d --as sam"),
        (["d", "--adjudicate"], "adjudicate d --as NAME"),
        (["d", "--list", "--tag", "Negation"], "list d --tag Negation"),
        (["d", "--retired", "--format", "json"], "list d --retired --format json"),
        (["d", "--show", "3"], "show d 3"),
        (
            ["d", "--edit", "3", "--as", "ana", "--set", "label=neutral"],
            "edit d 3 --as ana --set label=neutral",
        ),
        (["d", "--retire=3", "--as", "ana"], "retire d 3 --as ana"),
        (["d", "--restore", "3"], "restore d 3 --as NAME"),
        (["d", "--queue"], "queue d"),
        (["d", "--stats", "--list"], "stats d"),
        (["d"], "stats d"),
        (
            ["d", "--export", "new-ax.tsv", "--format", "superglue"],
            "export d new-ax.tsv --format superglue",
        ),
        (["d", "--create", "--two-way"], "create d --two-way"),
        (["--tags"], "tags"),
        (["--format", "json"], "sets --format json"),
    ],
)
def test_the_old_flag_style_points_at_the_command(cli, old, new):
    result = cli("curate", *old)  # the runner re-raises anything but a clean exit: no traceback
    assert result.code == 2
    assert "is not a command" in result.stderr
    assert f"try `annotate curate {new}`" in " ".join(result.stderr.split())


def test_a_mistyped_command_gets_the_nearest_one(cli):
    result = cli("curate", "stat", "d")
    assert result.code == 2 and "did you mean 'stats'?" in result.stderr


def test_review_with_nothing_to_review_says_so_and_opens_no_screen(cli, tmp_path, monkeypatch):
    import annotate.tui.curate.app as curate_screens

    def no_screen(*args, **kwargs):
        raise AssertionError("the review screen was opened")

    monkeypatch.setattr(curate_screens, "create_curate_app", no_screen)
    assert cli("curate", "import", "d", write_diagnostic(tmp_path), "--as", "glue").code == 0
    result = cli("curate", "review", "d", "--as", "sam", "--author", "nobody", "--tag", "Negation")
    assert result.code == 0, result.stderr
    [line] = result.stdout.splitlines()
    assert line == (
        "sam: nothing to review in set 'd' among examples by nobody, tagged Negation (your "
        "filter); no screen opened."
    )
    # Every example is glue's own: nothing by others to review, filter or not.
    alone = cli("curate", "review", "d", "--as", "glue")
    assert alone.stdout == "glue: nothing to review in set 'd' by others; no screen opened.\n"
    # glue's examples, none by sam: with no filter (or a filter they match) the screen opens.
    with pytest.raises(AssertionError, match="the review screen was opened"):
        cli("curate", "review", "d", "--as", "sam", "--author", "glue")


def test_an_export_warns_of_disputed_and_unchecked_labels(cli, db_url, tmp_path):
    """An export wrote a label a review disputes, or one "to check" after an edit, without a
    word: the file holds one label per example, and a human study scores against it."""
    from annotate.curation.review import submit_review

    assert cli("curate", "import", "d", write_diagnostic(tmp_path), "--as", "glue").code == 0
    clean = cli("curate", "export", "d", tmp_path / "clean.tsv")
    assert clean.code == 0 and clean.stderr == ""
    ws = open_workspace(db_url)
    submit_review(ws.engine, "d", "sam", 3, "neutral", ["Negation"])
    ws.engine.dispose()
    edit = ("curate", "edit", "d", "1", "--as", "glue", "--set", "premise=The cat sat on a mat.")
    assert cli(*edit, "--reason", "article").code == 0
    result = cli("curate", "export", "d", tmp_path / "out.tsv")
    assert result.code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "1 example written while a review disputes its label or tags, not settled yet" in said
    assert "(`annotate curate queue d` lists them)" in said
    assert '2 examples written with a label "to check"' in said
