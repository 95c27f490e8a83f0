"""`annotate flags`: flagged items, resolving a flag, excluding an item from scoring."""

from __future__ import annotations

import typer

from annotate.cli.context import ROW_ID, Format, app, options
from annotate.cli.output import print_json, print_table, say
from annotate.login import login_name


@app.command("flags")
def flags_command(
    ctx: typer.Context,
    study: str,
    resolve: int = typer.Option(
        None, "--resolve", help="Mark this flag resolved (its id: the Flag column)", **ROW_ID
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
    from annotate.protocol.answers import describe
    from annotate.report.sections.flags import item_text

    # One block per flag: the item's text is shown whole, as the annotator saw it.
    say(f"Flagged items of {study}: {len(rows)}" + ("" if rows else " (none)"))
    for r in rows:
        who = r.annotator + (" (synthetic)" if r.synthetic else "")
        state = r.state + (f" by {r.by} at {r.at:%Y-%m-%d %H:%M}: {r.reason}" if r.by else "")
        say(f"\nflag {r.label_id} · item {r.source_id} · {who}, {r.phase} · {state}")
        say(f"  comment: {r.comment or '(none)'}")
        say(f"  answered: {describe(study_ctx.spec, r.value)}")
        for line in item_text(study_ctx.spec, r.fields).splitlines():
            say(f"  {line}")
    excluded = flags.excluded_item_ids(ws.engine, study_ctx.id)
    if excluded:
        print_table(
            [e.as_dict() for e in excluded.values()],
            [("source_id", "Item"), ("by", "By"), ("reason", "Reason"), ("at", "At")],
            title="Excluded from scoring and agreement",
        )
