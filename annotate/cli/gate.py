"""`annotate gate`: the trainees' standing at the gate, closing a median gate, manual decisions
and the admitted workers' allow-list."""

from __future__ import annotations

from pathlib import Path

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say
from annotate.login import login_name
from annotate.wording import count_of, shell_word

NO_ANSWERS = "none answered"
"""The Accuracy cell of someone who answered no training item (admitted by hand): not 0.000."""


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
    idle = [o for o, given in (("--reason", reason), ("--by", by), ("--force", force)) if given]
    if idle and not (close or admit or reject):
        raise UserError(
            f"{' and '.join(idle)} only go with a decision (--close, --admit NAME or "
            "--reject NAME); the gate was not changed"
        )
    who = (by or "").strip() or login_name()
    if (admit or reject) and not (reason and reason.strip()):
        raise UserError("a manual gate decision needs a reason: --reason '...'")
    manual = [(name, True) for name in admit] + [(name, False) for name in reject]
    if manual:  # all or none: nothing is written while one of them would be refused
        gate.check_manual(ws.engine, study_ctx, manual, force=force)
    decisions = []
    planned: set[str] = set()  # decided by the close: the plan above already gave each reason
    if close:
        plan = gate.preview_close(ws.engine, study_ctx)
        if fmt is Format.table:
            _print_plan(plan)
        try:
            closed = gate.close_training(
                ws.engine, study_ctx, force=force, by=who, reason=reason or ""
            )
        except gate.GateRefused as refused:
            if fmt is Format.json:
                raise
            raise UserError(
                f"gate of {study} not closed: {count_of(len(refused.warnings), 'warning')} above; "
                "pass --force to close anyway"
            ) from None
        decisions += closed
        planned = {d.name for d in closed}
    for name, verdict in manual:
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
        if d.name not in planned:
            say(f"{d.name}: {verdict} by {d.rule}{threshold}: {d.reason}")
        if (note := d.labels_note()) is not None:
            say(f"{d.name}: {note}")
    shown = [
        r if r["training_accuracy"] is not None else {**r, "training_accuracy": NO_ANSWERS}
        for r in rows
    ]
    print_table(
        shown,
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
        if row["reason"] is not None and row["name"] not in planned:
            aside = row["test_labels_set_aside"]
            also = f" ({count_of(aside, 'test label')} set aside)" if aside else ""
            say(f"{row['name']}: {row['gate']}, {row['reason']}{also}")
    if closure is not None:
        say(closure.describe())
    if close and _on_prolific(ws.engine, study_ctx):
        group = f"annotate prolific group {shell_word(study)}"
        say(f"Next: `{group}` puts the admitted into study B's group")


def _on_prolific(engine, study_ctx) -> bool:
    """Whether `annotate prolific create` made Prolific studies for this study."""
    from annotate.platforms.prolific.studies import prolific_studies

    return bool(prolific_studies(engine, study_ctx))


def _export_allow_list(engine, study_ctx, platform: str, path: Path) -> None:
    """The admitted workers' platform ids, one a line (what Prolific's custom allow-list and an
    MTurk qualification script take)."""
    from annotate.errors import UserError
    from annotate.protocol.crowd import admitted_ids, refuse_other_platform

    platforms = ("prolific", "mturk", "link")
    if platform not in platforms:
        raise UserError(f"--export takes prolific, mturk or link, not {platform!r}")
    refuse_other_platform(study_ctx, platform, "--export", platforms)
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
    for note in plan.notes:
        say(f"  {note}")
    for w in plan.warnings:
        warn(f"warning: {w}")
