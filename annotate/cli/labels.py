"""`annotate import-labels`: a study from labels collected elsewhere (MTurk, Qualtrics, Potato,
Label Studio, a long CSV/JSONL). The readers and the all-or-nothing import live in
annotate/formats/; this module parses options and says what happened."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from annotate.cli.context import ROW_ID, Format, app, options
from annotate.cli.output import print_json, say, warn
from annotate.formats.label_sources.registry import names as source_names
from annotate.wording import count_of

FORMATS = source_names()
"""The label sources' names, built-in and installed (read once, for --help; none is loaded)."""


def _known_format(value: str) -> str:
    """--format names a registered source (an installed package's too), as a choice would."""
    known = source_names()
    if value not in known:
        raise ValueError(f"{value!r} is not one of {', '.join(map(repr, known))}.")
    return value


def _one_of(words: list[str]) -> str:
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else "".join(words)


class TieRule(StrEnum):
    random = "random"
    abstain = "abstain"


IMPORT_LABELS_HELP = """Make a study from labels collected outside annotate.

FILE is an MTurk batch results CSV, a Qualtrics CSV export, Potato's annotated_instances.jsonl,
a Label Studio JSON export, a long CSV/JSONL (one label per row) or the file of a format an
installed package adds; --format says which, else it is told from the content. Items are
matched by id to an imported dataset (--dataset), or made from the file's columns (--task, with
--map FIELD=COLUMN). --values maps answers to the task's labels ('entailment=1,not_entailment=0')
or bins a slider ('0-33=contradiction,34-66=neutral,67-100=entailment'); the answer as given is
kept beside its label. --skip-when na leaves out the answers whose `na` column is ticked;
--map flag=na flags them instead, with the column's value as comment. Workers become
pseudonymous annotators (w01, w02, ...). The same file with the same options is imported once;
other options make another study (name it with --study). All or nothing: a bad line stops the
import and names file and line."""


@app.command("import-labels", help=IMPORT_LABELS_HELP)
def import_labels(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="The label file"),
    study: str | None = typer.Option(
        None, "--study", help="Name of the new study (default: the file's name)"
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        metavar="<" + "|".join(FORMATS) + ">",
        parser=_known_format,
        help=f"{_one_of(FORMATS)} (default: detect)",
    ),
    dataset: int | None = typer.Option(
        None,
        "--dataset",
        help="An imported dataset whose items the file's ids name",
        **ROW_ID,
    ),
    task: str | None = typer.Option(
        None, "--task", help="The task, when the items come from the file itself"
    ),
    mapping: list[str] = typer.Option(
        [],
        "--map",
        help="KEY=COLUMN, comma-separated or repeated: item, annotator, label, seconds, "
        "answered_at, shown_at, comment, gold, flag, or a task field (MTurk: the Input/Answer "
        "name); a key the format cannot use is refused",
    ),
    skip_when: list[str] = typer.Option(
        [],
        "--skip-when",
        help="COLUMN or COLUMN=VALUE (repeatable): leave out the answers whose column is ticked "
        "(not empty, false, 0, off or no) or equals VALUE (MTurk: the Answer name, na for "
        "Answer.na0, ...)",
    ),
    values: str | None = typer.Option(
        None, "--values", help="LABEL=ANSWER,… or LOW-HIGH=LABEL,… (bins for a slider)"
    ),
    k: int | None = typer.Option(
        None, "--k", min=1, help="Annotators per item (default: what most items have)"
    ),
    keep_rejected: bool = typer.Option(
        False, "--keep-rejected", help="MTurk: keep the assignments marked Rejected"
    ),
    tie_rule: TieRule | None = typer.Option(
        None, "--tie-rule", help="random (default, with the preset's seed) or abstain"
    ),
    out: Format = typer.Option(Format.table, "--output", help="table or json: what was imported"),
) -> None:
    from annotate.formats.label_import import import_labels as run
    from annotate.formats.label_sources.options import parse_map, parse_skip_when

    engine = options(ctx).workspace(create=True).engine  # like `import`: data makes a store
    result = run(
        engine,
        file,
        study=study,
        fmt=fmt,
        task=task,
        dataset_id=dataset,
        mapping=parse_map(mapping),
        values=values,
        k=k,
        keep_rejected=keep_rejected,
        tie_rule=tie_rule.value if tie_rule else None,
        skip_when=parse_skip_when(skip_when),
    )
    if out is Format.json:
        print_json(result.to_json())
        return
    if result.already_imported:
        say(
            f"{file}: already imported (same sha256, same options) as study {result.study!r}; "
            "nothing changed (other options make another study: name it with --study)"
        )
        return
    say(
        f"study {result.study!r}: {count_of(result.n_labels, 'label')} on "
        f"{count_of(result.n_items, 'item')} from {count_of(result.n_annotators, 'annotator')} "
        f"(k = {result.k}); {result.collected}"
    )
    if result.n_skipped:
        say(f"left out: {count_of(result.n_skipped, 'answer')} (--skip-when)")
    if result.n_flagged:
        say(f"flagged: {count_of(result.n_flagged, 'answer')}, the column's value as comment")
    if result.created_items:
        say(f"items made from the file's columns: dataset {result.dataset_id}")
    for note in result.notes:
        warn(note)
