"""Commands about the store and its data: init, tasks, protocols, import, datasets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say, warn
from annotate.wording import count_of

if TYPE_CHECKING:  # pydantic specs, the importer and the store load inside the commands
    from annotate import specs
    from annotate.formats.importer import ImportResult
    from annotate.formats.sources import Source

PROGRESS_BAR_FROM_BYTES = 2_000_000
"""Files larger than this show a progress bar while they import."""


@app.command()
def init(
    ctx: typer.Context,
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Create an empty store (SQLite file or PostgreSQL database)."""
    ws = options(ctx).workspace(create=True)
    if fmt is Format.json:
        from annotate.store.schema import SCHEMA_HEAD

        print_json({"store": ws.shown, "schema": int(SCHEMA_HEAD)})
        return
    say(f"store ready at {ws.shown}")


def task_row(t: specs.TaskSpec) -> dict:
    return {
        "name": t.name,
        "benchmark": t.benchmark,
        "aliases": t.aliases,
        "title": t.title,
        "kind": t.kind,
        "layout": t.layout,
        "labels": [o.value for o in t.labels]
        or ([f"{t.scale.min}..{t.scale.max}"] if t.scale else []),
        "metrics": t.metrics,
        "submission_file": t.submission.file if t.submission else None,
    }


@app.command()
def tasks(
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
) -> None:
    """List the tasks this installation knows (built-in and from the tasks_path folders).

    Those folders are named by ANNOTATE_TASKS_PATH or by the project file's tasks_path."""
    from annotate import specs

    rows = [task_row(t) for t in specs.all_tasks()]
    if fmt is Format.json:
        print_json(rows)
        return
    print_table(
        rows,
        [
            ("name", "Task"),
            ("aliases", "Official name"),
            ("layout", "Layout"),
            ("labels", "Labels"),
            ("metrics", "Metrics"),
            ("submission_file", "Submission"),
        ],
        title="Tasks",
    )


@app.command()
def protocols(
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
) -> None:
    """List the protocol presets with every parameter."""
    from annotate import specs

    rows = [p.stated().model_dump() for p in specs.all_protocols()]
    if fmt is Format.json:
        print_json(rows)
        return
    print_table(
        rows,
        [
            ("name", "Preset"),
            ("training_items", "Training items"),
            ("gate_rule", "Gate"),
            ("gate_min_items", "Min items"),
            ("gate_threshold", "Threshold"),
            ("test_sample", "Test sample"),
            ("annotators_per_item", "k"),
            ("tie_rule", "Tie rule"),
            ("description", "About"),
        ],
        title="Protocol presets",
    )


def _parse_mapping(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise typer.BadParameter(f"expected FIELD=COLUMN, got {pair!r}", param_hint="--map")
        mapping[key.strip()] = value.strip()
    return mapping


def _import_with_progress(
    ws, spec, sources: list[Source], *, replace: bool = False
) -> list[ImportResult]:
    """Every source in one transaction (all or nothing), a bar for each large one."""
    from annotate.formats.importer import import_sources

    if all(source.size < PROGRESS_BAR_FROM_BYTES for source in sources):
        return import_sources(ws.engine, spec, sources, replace=replace)
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>3.0f}%"),
        TimeRemainingColumn(),
        transient=True,
    ) as bar:

        def bar_for(source: Source):  # type: ignore[no-untyped-def]
            if source.size < PROGRESS_BAR_FROM_BYTES:
                return None
            job = bar.add_task(f"importing {source.path.name}", total=None)

            def update(done: int, total: int) -> None:
                bar.update(job, completed=done, total=total)

            return update

        return import_sources(ws.engine, spec, sources, progress=bar_for, replace=replace)


def _label_names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if len(names) < 2 or not all(names) or len(set(names)) != len(names):
        raise typer.BadParameter(
            f"expected two or more distinct names separated by commas, got {text!r}",
            param_hint="--label-names",
        )
    return names


@app.command("import")
def import_(
    ctx: typer.Context,
    task: str = typer.Argument(
        ..., help="Task name (glue/rte, SST-2, AX-b …) or a custom task .toml"
    ),
    path: Path = typer.Argument(
        ...,
        help="A data file, a task folder (every split in it), the task's distributed zip, or a "
        "Hugging Face layout: a Parquet or Arrow file, a Hub config folder or repository "
        "snapshot, a save_to_disk folder, to_json/to_csv output",
    ),
    split: str = typer.Option(
        None,
        "--split",
        help="The split of the file's items, over what its name says (by default told from "
        "the name; val, validation and dev are one split)",
    ),
    label_names: str = typer.Option(
        None,
        "--label-names",
        help="NAME,NAME,…: the class names of integer labels, in the file's order (its "
        "ClassLabel names), when no dataset_info.json or Parquet schema gives them",
    ),
    mapping: list[str] = typer.Option(
        [], "--map", help="FIELD=COLUMN: read a field (or id, label) from another column or key"
    ),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Import a file imported before (the same bytes) again, with this run's --split, "
        "--map and --label-names, in place of its earlier dataset; refused while a study uses "
        "that dataset",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
) -> None:
    """Import a task's data file(s). All or nothing: a bad file leaves the store unchanged,
    whatever the folder's other files hold; a file imported before is skipped (--replace:
    imported again in place of its earlier dataset)."""
    from annotate import specs
    from annotate.formats.importer import with_field_mapping
    from annotate.formats.sources import sources_for

    spec = specs.load_task(task)
    if mapping:
        spec = with_field_mapping(spec, _parse_mapping(mapping))
    if not path.exists():
        raise typer.BadParameter(f"{path}: no such file or folder", param_hint="PATH")
    targets = sources_for(path, spec, split, _label_names(label_names))
    ws = options(ctx).workspace(create=True)
    results = _import_with_progress(ws, spec, targets, replace=replace)
    rows = [
        {
            "id": r.dataset_id,
            "task": r.task,
            "split": r.split,
            "items": r.n_items,
            "detail": r.detail,
            "sha256": r.sha256,
            "path": r.path,
            "status": "already imported"
            if r.already_imported
            else ("replaced" if r.replaced is not None else "imported"),
            **({"identical_to": r.identical_to} if r.identical_to else {}),
            **({"replaced": r.replaced} if r.replaced is not None else {}),
        }
        for r in results
    ]
    if fmt is Format.json:
        print_json(rows)
        return
    for r in results:
        if r.already_imported:
            warn(
                f"{r.path}: skipped, identical (same sha256) to {r.identical_to}, imported "
                f"before as dataset {r.dataset_id} ({r.task} {r.split}); --replace imports it "
                "again with this run's options"
            )
        else:
            extra = ", ".join(
                f"{v} {k}" for k, v in r.detail.items() if k not in {"items", "labelled"}
            )
            gold = "with gold labels" if r.detail.get("labelled") else "without gold labels"
            say(
                f"dataset {r.dataset_id}: {r.task} {r.split}, {count_of(r.n_items, 'item')} {gold}"
                + (f" ({extra})" if extra else "")
                + f" from {r.path}"
                + (
                    f" (the earlier import, dataset {r.replaced}, removed)"
                    if r.replaced is not None
                    else ""
                )
            )


@app.command()
def datasets(
    ctx: typer.Context,
    fmt: Format = typer.Option(Format.table, "--format", help="table or json"),
) -> None:
    """List the imported datasets."""
    from annotate.store.queries import dataset_rows

    ws = options(ctx).workspace()
    rows = dataset_rows(ws.engine)
    if fmt is Format.json:
        print_json(rows)
        return
    for row in rows:
        row["sha"] = row["sha256"][:12]
    print_table(
        rows,
        [
            ("id", "Id"),
            ("task", "Task"),
            ("split", "Split"),
            ("items", "Items"),
            ("labelled", "Gold"),
            ("detail", "Detail"),
            ("sha", "sha256"),
            ("path", "Path"),
        ],
        title=f"Datasets in {ws.shown}",
    )
