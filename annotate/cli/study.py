"""`annotate study create`, `study list` and `study show`: make a study and see its effective
protocol (`study crowd` is in annotate/cli/crowd.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from annotate.cli.context import Format, options
from annotate.cli.groups import study_app
from annotate.cli.output import print_json, print_table, say
from annotate.wording import count_of


@study_app.command("create")
def study_create(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="A name for the study"),
    task: str = typer.Option(..., "--task", help="Task name (superglue/rte, SST-2 …)"),
    protocol: str = typer.Option(
        None,
        "--protocol",
        help="Protocol preset or .toml file (default: ANNOTATE_DEFAULT_PROTOCOL or the project "
        "file's default_protocol, else superglue-2019)",
    ),
    train: str = typer.Option(
        None,
        "--train",
        help="The dataset training items come from: a dataset id (`annotate datasets`), a split "
        "(val, dev, train) or the imported file's name (default: the task's latest dev set)",
    ),
    test: str = typer.Option(
        None,
        "--test",
        help="The dataset the test sample comes from: a dataset id, a split (test, val) or the "
        "imported file's name (default: the task's latest test set)",
    ),
    training_items: int = typer.Option(
        None,
        "--training-items",
        min=0,
        help="How many training items (also --set training_items=N)",
    ),
    sample: str = typer.Option(None, "--sample", help="Test items to draw, or 'all'"),
    seed: int = typer.Option(None, "--seed", help="Seed of the samples"),
    k: int = typer.Option(None, "--annotators-per-item", help="Distinct annotators per test item"),
    settings: list[str] = typer.Option(
        [], "--set", help="KEY=VALUE: override any protocol setting (crowd=PLATFORM too)"
    ),
    crowd_platform: str = typer.Option(
        None,
        "--crowd",
        help="A crowd study: prolific, mturk or link (a plain link of your own); workers "
        "arrive by the platform's link (no tokens)",
    ),
    crowd_config: Path = typer.Option(
        None, "--crowd-config", help="The crowd study's TOML: study ids, codes, consent, survey"
    ),
    platform_studies: list[str] = typer.Option(
        [], "--platform-study", help="A platform study id whose link the study accepts"
    ),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Create a study: draw the training items and the seeded test sample."""
    from annotate import specs
    from annotate.protocol.studies import create_study, dataset_by_reference

    protocol = protocol or specs.default_protocol()
    overrides = dict(specs.parse_setting(s) for s in settings)
    crowd_platform = _crowd_platform(crowd_platform, overrides.pop("crowd", None))
    crowd = None
    if crowd_platform or crowd_config or platform_studies:
        from annotate.cli.crowd_setup import crowd_settings

        crowd = crowd_settings(crowd_platform, crowd_config, platform_studies)
    if sample is not None:
        overrides["test_sample"] = "all" if sample == "all" else _positive_int(sample, "--sample")
    if seed is not None:
        overrides["seed"] = seed
    if k is not None:
        overrides["annotators_per_item"] = k
    if training_items is not None:
        overrides["training_items"] = training_items
    ws = options(ctx).workspace()
    spec = specs.load_task(task)
    study = create_study(
        ws.engine,
        name,
        task,
        protocol,
        train_dataset_id=None
        if train is None
        else dataset_by_reference(ws.engine, train, [spec.name, *filter(None, [spec.train_on])]),
        test_dataset_id=None
        if test is None
        else dataset_by_reference(ws.engine, test, [spec.name]),
        overrides=overrides,
        crowd=crowd,
    )
    data = _study_detail(ws.engine, name)
    if study.warnings:
        from annotate.cli.output import warn

        for warning in study.warnings:
            warn(f"warning: {warning}")
    if fmt is Format.json:
        print_json(data)
        _print_notes(study.notes)
        return
    say(
        f"study {study.study.name!r} created: {study.spec.name}, protocol {study.protocol.name}, "
        f"{count_of(data['training_items'], 'training item')} from dataset "
        f"{study.study.train_dataset_id}, "
        f"{count_of(data['test_items'], 'test item')} from dataset {study.study.test_dataset_id}, "
        f"{count_of(study.k, 'annotator')} per item"
    )
    _print_notes(study.notes)
    if crowd is not None:
        from annotate.cli.crowd_setup import print_crowd

        print_crowd(name, crowd)


def _print_notes(notes: tuple[str, ...]) -> None:
    """After the study's line, on stderr: what it will not give (test items without gold)."""
    from annotate.cli.output import warn

    for note in notes:
        warn(f"note: {note}")


def _crowd_platform(option: str | None, setting: object) -> str | None:
    """--crowd, or --set crowd=…: one platform (both given must agree)."""
    from annotate.errors import UserError
    from annotate.protocol.crowd_config import PLATFORMS

    chosen = {str(v) for v in (option, setting) if v is not None}
    if len(chosen) > 1:
        raise UserError(f"--crowd {option} and --set crowd={setting} disagree")
    platform = chosen.pop() if chosen else None
    if platform is not None and platform not in PLATFORMS:
        raise UserError(f"--crowd takes {', '.join(PLATFORMS)}, not {platform!r}")
    return platform


def _positive_int(text: str, option: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise typer.BadParameter(
            f"expected a number or 'all', got {text!r}", param_hint=option
        ) from None
    if value < 1:
        raise typer.BadParameter("must be at least 1", param_hint=option)
    return value


def _study_detail(engine, name: str) -> dict:
    from annotate.protocol import catch
    from annotate.protocol.status import study_status
    from annotate.protocol.studies import load_study

    ctx = load_study(engine, name)
    status = study_status(engine, ctx)
    with_training = gate_training_quota(engine, ctx)
    with engine.connect() as conn:  # the drift threshold in force, and where it comes from
        protocol = catch.effective_settings(conn, ctx, ctx.protocol.model_dump())
    return {
        "study": ctx.study.name,
        "task": ctx.spec.name,
        "state": status["state"],
        "train_dataset": ctx.study.train_dataset_id,
        "test_dataset": ctx.study.test_dataset_id,
        "training_items": with_training,
        "test_items": status["items_total"],
        "items_complete": status["items_complete"],
        "protocol": protocol,
        "crowd": _crowd_summary(ctx.study.crowd),
    }


def _crowd_summary(stored: dict | None) -> dict | None:
    """Platform and accepted platform studies (`annotate study crowd` shows links and codes)."""
    if stored is None:
        return None
    keys = ("platform", "study_ids", "training_study_id", "test_study_id")
    return {k: stored.get(k) for k in keys}


def gate_training_quota(engine, ctx) -> int:
    from sqlmodel import Session

    from annotate.protocol import gate

    with Session(engine) as session:
        return gate.training_quota(session, ctx.id)


@study_app.command("list")
def study_list(ctx: typer.Context, fmt: Format = typer.Option(Format.table, "--format")) -> None:
    """List the studies in the store."""
    from annotate.protocol.standing import study_rows

    rows = study_rows(options(ctx).workspace().engine)
    if fmt is Format.json:
        print_json(rows)
        return
    print_table(
        rows,
        [
            ("id", "Id"),
            ("name", "Study"),
            ("task", "Task"),
            ("protocol", "Protocol"),
            ("state", "State"),
            ("test_items", "Test items"),
            ("annotators_per_item", "k"),
        ],
        title="Studies",
    )


@study_app.command("show")
def study_show(
    ctx: typer.Context, name: str, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """Show a study with its effective protocol."""
    data = _study_detail(options(ctx).workspace().engine, name)
    if fmt is Format.json:
        print_json(data)
        return
    rows = [{"key": k, "value": v} for k, v in data.items() if k not in ("protocol", "crowd")]
    rows += [{"key": f"protocol.{k}", "value": v} for k, v in data["protocol"].items()]
    rows += [{"key": f"crowd.{k}", "value": v} for k, v in (data["crowd"] or {}).items()]
    print_table(rows, [("key", "Setting"), ("value", "Value")], title=f"Study {name}")
