"""Commands that run the protocol: study, annotator, gate, status, simulate."""

from __future__ import annotations

from pathlib import Path

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import console, print_json, print_table, say
from annotate.login import login_name
from annotate.wording import count_of, plural

study_app = typer.Typer(help="Create and inspect studies.", no_args_is_help=True)
annotator_app = typer.Typer(help="Manage annotators.", no_args_is_help=True)
app.add_typer(study_app, name="study")
app.add_typer(annotator_app, name="annotator")


@study_app.command("create")
def study_create(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="A name for the study"),
    task: str = typer.Option(..., "--task", help="Task name (superglue/rte, SST-2 …)"),
    protocol: str = typer.Option(
        "superglue-2019", "--protocol", help="Protocol preset or .toml file"
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
        help="A crowd study: workers arrive by a prolific, mturk or generic link (no tokens)",
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

    overrides = dict(specs.parse_setting(s) for s in settings)
    crowd_platform = _crowd_platform(crowd_platform, overrides.pop("crowd", None))
    crowd = None
    if crowd_platform or crowd_config or platform_studies:
        from annotate.cli.crowd import crowd_settings

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
    asked = study.protocol.training_items
    if data["training_items"] < asked:
        from annotate.cli.output import warn

        shared = study.study.train_dataset_id == study.study.test_dataset_id
        why = (
            f"the test sample uses dataset {study.study.test_dataset_id}, which training "
            "shares, and the two never overlap"
            if shared
            else f"dataset {study.study.train_dataset_id} has no more"
        )
        warn(
            f"warning: {count_of(data['training_items'], 'training item')} instead of the "
            f"{asked} asked for: {why}"
            + (
                "; nobody will be trained or gated (a smaller --sample leaves some)"
                if not data["training_items"]
                else ""
            )
        )
    if fmt is Format.json:
        print_json(data)
        return
    say(
        f"study {name!r} created: {study.spec.name}, protocol {study.protocol.name}, "
        f"{count_of(data['training_items'], 'training item')} from dataset "
        f"{study.study.train_dataset_id}, "
        f"{count_of(data['test_items'], 'test item')} from dataset {study.study.test_dataset_id}, "
        f"{count_of(study.k, 'annotator')} per item"
    )
    if crowd is not None:
        from annotate.cli.crowd import print_crowd

        print_crowd(name, crowd, None)


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
        drift = catch.catch_threshold(conn, ctx)
    protocol = {
        **ctx.protocol.model_dump(),
        "catch_min_accuracy": drift.value,
        "catch_min_accuracy_from": drift.source,
    }
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


@annotator_app.command("add")
def annotator_add(
    ctx: typer.Context,
    name: str,
    token: bool = typer.Option(
        False,
        "--token",
        help="Give the annotator a secret token, printed once, asked for by `annotate label`",
    ),
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Register an annotator by name (with --token: and a secret they must give to label)."""
    from annotate.protocol.studies import add_annotator

    engine = options(ctx).workspace(create=True).engine
    if not token:
        annotator = add_annotator(engine, name)
        if fmt is Format.json:
            print_json({"annotator": annotator.name, "token": None})
            return
        say(f"annotator {annotator.name!r} added")
    else:
        from annotate.protocol.tokens import add_annotator_with_token

        annotator, secret = add_annotator_with_token(engine, name)
        _print_token_once(
            f"annotator {annotator.name!r} added with a token", annotator.name, secret, fmt
        )
    _warn_lookalikes(engine, annotator.name)


def _warn_lookalikes(engine, name: str) -> None:  # type: ignore[no-untyped-def]
    """Two names one to the eye (Cyrillic "аna", Latin "ana"): say so, and how they differ."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.cli.output import warn
    from annotate.protocol.names import confusable_with, spelled_out
    from annotate.store.models import Annotator

    with Session(engine) as session:
        others = list(session.scalars(select(Annotator.name)))
    for other in confusable_with(name, others):
        apart = "; ".join(s for s in (spelled_out(name, other), spelled_out(other, name)) if s)
        warn(
            f"warning: {name!r} looks like the existing annotator {other!r}"
            + (f" (they differ in: {apart})" if apart else "")
        )


@annotator_app.command("token")
def annotator_token(
    ctx: typer.Context,
    name: str,
    fmt: Format = typer.Option(Format.table, "--format", help="table (for people) or json"),
) -> None:
    """Give an annotator a new token (the old one stops working); printed once."""
    from annotate.protocol.tokens import reset_token

    secret = reset_token(options(ctx).workspace().engine, name)
    _print_token_once(f"new token for annotator {name!r}", name, secret, fmt)


def _print_token_once(what: str, name: str, secret: str, fmt: Format) -> None:
    # The store keeps only a salted hash: this is the one time anybody sees the token.
    if fmt is Format.json:
        print_json({"annotator": name, "token": secret})
        return
    say(f"{what}. Their token (shown only now; pass it on privately):")
    say(secret)


@annotator_app.command("list")
def annotator_list(
    ctx: typer.Context, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """List the annotators (whether each has a token, and refused logins; never the token)."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.protocol.names import look_alikes
    from annotate.store.models import Annotator

    with Session(options(ctx).workspace().engine) as session:
        everyone = list(session.scalars(select(Annotator).order_by(Annotator.name)))
        alike = look_alikes(a.name for a in everyone)
        rows = [
            {
                "id": a.id,
                "name": a.name,
                "looks_like": alike[a.name],
                "token": a.token_hash is not None,
                "failed_logins": a.failed_logins,
                "created_at": a.created_at.isoformat(timespec="seconds"),
                "synthetic": a.synthetic,
                "platform": a.platform,  # never the platform id: `annotator show NAME` has it
            }
            for a in everyone
        ]
    if fmt is Format.json:
        print_json(rows)
        return
    print_table(
        rows,
        [
            ("id", "Id"),
            ("name", "Name"),
            ("token", "Token"),
            ("failed_logins", "Refused logins"),
            ("created_at", "Added"),
            ("synthetic", "Synthetic"),
            ("platform", "Platform"),
            ("looks_like", "Looks like"),
        ],
        title="Annotators",
    )


@app.command("gate")
def gate_command(
    ctx: typer.Context,
    study: str,
    close: bool = typer.Option(
        False, "--close", help="Close training: decide everyone by the median rule"
    ),
    admit: list[str] = typer.Option([], "--admit", help="Admit an annotator by hand"),
    reject: list[str] = typer.Option([], "--reject", help="Refuse an annotator by hand"),
    reason: str = typer.Option(
        None,
        "--reason",
        help="Why (stored with a manual --admit/--reject decision, or a --close --force)",
    ),
    by: str = typer.Option(None, "--by", help="Who decides (stored; default: your login name)"),
    force: bool = typer.Option(
        False, "--force", help="Act despite the warnings (study cannot complete, mid-training …)"
    ),
    export: tuple[str, str] = typer.Option(
        None,
        "--export",
        metavar="PLATFORM FILE",
        help="Write the admitted workers' platform ids (prolific or mturk), one a line: the "
        "allow-list of the platform's test study",
    ),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Show each trainee's count, accuracy and gate decision with its reason; close a median
    gate (prints who will be admitted and rejected, and refuses on warnings unless --force);
    admit or refuse by hand with --reason; export the admitted as a platform allow-list."""
    from annotate.errors import UserError
    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    who = (by or "").strip() or login_name()
    if (admit or reject) and not (reason and reason.strip()):
        raise UserError("a manual gate decision needs a reason: --reason '...'")
    decisions = []
    if close:
        plan = gate.preview_close(ws.engine, study_ctx)
        if fmt is Format.table:
            _print_plan(plan)
        try:
            decisions += gate.close_training(
                ws.engine, study_ctx, force=force, by=who, reason=reason or ""
            )
        except gate.GateRefused as refused:
            if fmt is Format.json:
                raise
            raise UserError(
                f"gate of {study} not closed: {len(refused.warnings)} warning(s) above; "
                "pass --force to close anyway"
            ) from None
    for names, verdict in ((admit, True), (reject, False)):
        for name in names:
            decisions.append(
                gate.decide_manually(
                    ws.engine,
                    study_ctx,
                    name,
                    verdict,
                    reason=reason or "",
                    force=force,
                    decided_by=who,
                )
            )
    rows = gate.gate_overview(ws.engine, study_ctx)
    closure = gate.closure_of(ws.engine, study_ctx)
    if export:
        _export_allow_list(ws.engine, study_ctx, export[0], Path(export[1]))
    if fmt is Format.json:
        print_json(
            {
                "study": study,
                "rule": study_ctx.protocol.gate_rule,
                "trainees": rows,
                "closure": None if closure is None else closure.as_dict(),
            }
        )
        return
    for d in decisions:
        verdict = "admitted" if d.admitted else "rejected"
        threshold = f" (threshold {d.threshold:.3f})" if d.threshold is not None else ""
        say(f"{d.name}: {verdict} by {d.rule}{threshold}: {d.reason}")
    print_table(
        rows,
        [
            ("name", "Annotator"),
            ("training_done", "Done"),
            ("training_quota", "Of"),
            ("training_accuracy", "Accuracy"),
            ("phase", "Phase"),
            ("gate", "Gate"),
            ("rule", "Rule"),
            ("threshold", "Threshold"),
            ("decided_at", "Decided"),
        ],
        title=f"Gate of {study} ({study_ctx.protocol.gate_rule} rule, at least "
        f"{count_of(study_ctx.protocol.gate_min_items, 'item')})",
    )
    # Reasons are sentences: a line each (a table column would fold them at 80 columns).
    for row in rows:
        if row["reason"] is not None:
            say(f"{row['name']}: {row['gate']}, {row['reason']}")
    if closure is not None:
        say(closure.describe())


def _export_allow_list(engine, study_ctx, platform: str, path: Path) -> None:
    """The admitted workers' platform ids, one a line (what Prolific's custom allow-list and an
    MTurk qualification script take)."""
    from annotate.errors import UserError
    from annotate.protocol.crowd import admitted_ids

    if platform not in ("prolific", "mturk", "link"):
        raise UserError(f"--export takes prolific, mturk or link, not {platform!r}")
    ids = admitted_ids(engine, study_ctx, platform)
    try:
        path.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None
    say(f"{path}: {count_of(len(ids), f'admitted {platform} worker')}")


def _print_plan(plan) -> None:
    """Who closing the gate admits and rejects, with why, then the warnings (on stderr)."""
    from annotate.cli.output import warn

    median = f"{plan.threshold:.3f}" if plan.threshold is not None else "-"
    say(
        f"Closing the gate (median {median}, at least {plan.min_items} items): "
        f"{len(plan.admit)} admitted, {len(plan.reject)} rejected; "
        f"{plan.admitted_after} admitted in all, {plan.k} needed per item"
    )
    for o in plan.admit + plan.reject:
        say(f"  {'admit ' if o.admitted else 'reject'} {o.name}: {o.reason}")
    if not plan.admit and not plan.reject:
        say("  every trainee has a gate decision already: closing changes nobody")
    for w in plan.warnings:
        warn(f"warning: {w}")


@app.command("status")
def status_command(
    ctx: typer.Context, study: str, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """Progress of a study: per annotator and per item."""
    from annotate.protocol.status import study_status
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    data = study_status(ws.engine, load_study(ws.engine, study))
    if fmt is Format.json:
        print_json(data)
        return
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    from annotate.terminal_text import SafeText as Text

    out = console()
    total = max(1, data["items_total"])
    summary = Table.grid(padding=(0, 2))
    summary.add_row(
        Text(f"{data['study']} ({data['task']}, {data['protocol']}, state {data['state']})"),
    )
    bar = Table.grid(padding=(0, 1))
    bar.add_row(
        ProgressBar(total=total, completed=data["items_complete"], width=40),
        Text(
            f"{data['items_complete']}/{data['items_total']} items complete, "
            f"{data['items_in_progress']} in progress, {data['items_untouched']} untouched"
            + (f", {data['items_open_ties']} open ties" if data.get("items_open_ties") else "")
            + (
                f", {data['items_decided_early']} decided before k"
                if data.get("items_decided_early")
                else ""
            )
        ),
    )
    out.print(summary)
    out.print(bar)
    table = Table(title="Annotators", title_justify="left")
    headings = ("Annotator", "Phase", "Training", "Accuracy", "Gate", "Test labels", "")
    for heading in (*headings, "Flags", "Last label"):
        table.add_column(heading)
    for a in data["annotators"]:
        accuracy = "" if a["training_accuracy"] is None else f"{a['training_accuracy']:.3f}"
        table.add_row(
            Text(a["name"] + (" (synthetic)" if a["synthetic"] else "")),
            Text(a["phase"]),
            Text(f"{a['training_done']}/{a['training_quota']}"),
            Text(accuracy),
            Text(a["gate"]),
            Text(str(a["test_done"])),
            ProgressBar(total=total, completed=a["test_done"], width=20),
            Text(str(a["flags"])),
            Text(_ago(a["last_activity"])),
        )
    out.print(table)
    hist = ", ".join(f"{n} labels: {c}" for n, c in data["labels_per_item"].items())
    out.print(Text(f"Items by number of labels (k = {data['annotators_per_item']}): {hist}"))
    f = data["flags"]
    out.print(
        Text(
            f"Flags: {f['total']} ({f['open']} open, {f['resolved']} resolved, {f['excluded']} "
            f"on excluded items); {f['excluded_items']} item(s) excluded from scoring"
            + (f"; `annotate flags {data['study']}` lists them" if f["total"] else "")
        )
    )
    if "crowd" in data:
        c = data["crowd"]
        counts = ", ".join(f"{o} {n}" for o, n in c["outcomes"].items())
        out.print(
            Text(
                f"Crowd ({c['platform']}) outcomes: {counts}; "
                f"{c['abandoned_sessions']} abandoned session(s)"
            )
        )
    out.print(Text(f"Last activity: {data['last_activity'] or 'none yet'}"))
    for warning in data["warnings"]:
        out.print(Text(f"warning: {warning}", style="bold"))


def _ago(iso: str | None) -> str:
    """How long ago, short: "40 s ago", "12 min ago", "3 h ago", "2 d ago" ("" for never)."""
    if iso is None:
        return ""
    from datetime import UTC, datetime

    seconds = max(0, int((datetime.now(UTC) - datetime.fromisoformat(iso)).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


@app.command("flags")
def flags_command(
    ctx: typer.Context,
    study: str,
    resolve: int = typer.Option(
        None, "--resolve", help="Mark this flag resolved (its id: the Flag column)"
    ),
    exclude: str = typer.Option(
        None, "--exclude", help="Exclude this test item (its source id) from scoring"
    ),
    include: str = typer.Option(
        None, "--include", help="Count an excluded test item again (undo --exclude)"
    ),
    reason: str = typer.Option(None, "--reason", help="Why (required with an action)"),
    by: str = typer.Option(None, "--by", help="Who acts (default: your login name)"),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """List flagged items (annotator, comment, item text); resolve a flag, or exclude an item
    from scoring and agreement (and undo), each recorded with who, when and why."""
    from annotate.errors import UserError
    from annotate.protocol import flags
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    actions = [a for a in (resolve, exclude, include) if a is not None]
    if len(actions) > 1:
        raise UserError("give one of --resolve, --exclude, --include at a time")
    if actions:
        who = by or login_name()
        if not (reason and reason.strip()):
            raise UserError("say why with --reason: the action is recorded with who and when")
        if resolve is not None:
            flags.resolve_flag(ws.engine, study_ctx, resolve, by=who, reason=reason)
            done = f"flag {resolve} resolved"
        else:
            ref = exclude if exclude is not None else include
            item_id = flags.find_test_item(ws.engine, study_ctx, str(ref))
            act = flags.exclude_item if exclude is not None else flags.include_item
            act(ws.engine, study_ctx, item_id, by=who, reason=reason)
            done = f"item {ref} " + (
                "excluded from scoring" if exclude is not None else "counts again"
            )
        if fmt is Format.table:
            say(f"{done} (by {who}: {reason.strip()})")
    rows = flags.list_flags(ws.engine, study_ctx.id)
    if fmt is Format.json:
        print_json(
            {
                "study": study,
                "flags": [r.as_dict() for r in rows],
                "excluded_items": [
                    e.as_dict() for e in flags.excluded_item_ids(ws.engine, study_ctx.id).values()
                ],
                "history": flags.flag_history(ws.engine, study_ctx.id),
            }
        )
        return
    from annotate.report.sections.flags import item_text

    # One block per flag: the item's text is shown whole, as the annotator saw it.
    say(f"Flagged items of {study}: {len(rows)}" + ("" if rows else " (none)"))
    for r in rows:
        who = r.annotator + (" (synthetic)" if r.synthetic else "")
        state = r.state + (f" by {r.by} at {r.at:%Y-%m-%d %H:%M}: {r.reason}" if r.by else "")
        say(f"\nflag {r.label_id} · item {r.source_id} · {who}, {r.phase} · {state}")
        say(f"  comment: {r.comment or '(none)'}")
        for line in item_text(study_ctx.spec, r.fields).splitlines():
            say(f"  {line}")
    excluded = flags.excluded_item_ids(ws.engine, study_ctx.id)
    if excluded:
        print_table(
            [e.as_dict() for e in excluded.values()],
            [("source_id", "Item"), ("by", "By"), ("reason", "Reason"), ("at", "At")],
            title="Excluded from scoring and agreement",
        )


def _simulate_hint(
    status: dict, study: str, annotators: int, accuracy: float, prefix: str, admitted: int
) -> str:
    """The one next step that moves an incomplete simulated study on: close the gate the
    trainees wait at; with enough admitted annotators, run the same ones again (same
    prefix: they go on where they stopped); else add as many as are missing."""
    waiting = [a for a in status["annotators"] if a["phase"] == "waiting"]
    if waiting:
        return (
            f"{count_of(len(waiting), 'trainee')} {'waits' if len(waiting) == 1 else 'wait'} "
            f"at the gate: close it (`annotate gate {study} --close`)."
        )
    k = status["annotators_per_item"]
    if admitted >= k:
        return (
            "Enough are admitted: run them again to go on "
            f"(`annotate simulate {study} --annotators {annotators} --accuracy {accuracy} "
            f"--prefix {prefix}`)."
        )
    missing = k - admitted
    return (
        f"Add {missing} more (`annotate simulate {study} --annotators {missing} "
        f"--accuracy {accuracy} --prefix more`)."
    )


@app.command("simulate")
def simulate_command(
    ctx: typer.Context,
    study: str,
    annotators: int = typer.Option(
        ..., "--annotators", min=1, help="How many synthetic annotators"
    ),
    accuracy: float = typer.Option(..., "--accuracy", min=0.0, max=1.0, help="Their mean accuracy"),
    seed: int = typer.Option(0, "--seed"),
    prefix: str = typer.Option("sim", "--prefix", help="Name prefix: sim1, sim2 …"),
    close_gate: bool = typer.Option(
        False,
        "--close-gate",
        help="Close a median gate for the simulated trainees (never while a real trainee is "
        "undecided)",
    ),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Run synthetic annotators (marked synthetic) through the real engine: training, gate
    (a median gate only with --close-gate), test."""
    from annotate.cli.progress import progress_bars
    from annotate.protocol.status import study_status
    from annotate.protocol.studies import load_study
    from annotate.simulate import simulate

    ws = options(ctx).workspace()
    with progress_bars() as progress:  # on stderr, and only on a terminal
        result = simulate(
            ws.engine,
            study,
            annotators,
            accuracy,
            seed=seed,
            prefix=prefix,
            close_gate=close_gate,
            progress=progress,
        )
    if fmt is Format.json:
        print_json(
            {
                "study": study,
                "training_labels": result.training_labels,
                "test_labels": result.test_labels,
                "gate_closed": result.gate_closed,
                "gate_note": result.gate_note,
                "annotators": result.annotators,
                **({"early_stop": result.early_stop} if result.early_stop else {}),
            }
        )
        return
    say(
        f"{annotators} simulated annotators: {result.training_labels} training and "
        f"{result.test_labels} test labels"
        + (" (median gate closed)" if result.gate_closed else "")
    )
    if result.early_stop and result.early_stop["saved_share"] is not None:
        e = result.early_stop
        say(
            f"stop_when_decided saved {e['labels_saved']} of {e['labels_full_k']} labels "
            f"({e['saved_share'] * 100:.1f}%); {e['items_decided_early']} items decided before k"
        )
    if result.gate_note:
        say(f"note: {result.gate_note}")
    status = study_status(ws.engine, load_study(ws.engine, study))
    admitted = sum(a["gate"] == "admitted" for a in status["annotators"])
    if status["items_complete"] < status["items_total"]:
        say(
            f"{status['items_complete']}/{status['items_total']} items have all "
            f"{status['annotators_per_item']} labels; {count_of(admitted, 'annotator')} "
            f"{plural(admitted, 'is')} admitted. "
            + _simulate_hint(status, study, annotators, accuracy, prefix, admitted)
        )
    print_table(
        result.annotators,
        [
            ("name", "Annotator"),
            ("accuracy_drawn", "Accuracy drawn"),
            ("phase", "Phase"),
            ("training_accuracy", "Training acc."),
            ("test_done", "Test labels"),
        ],
    )
