"""`annotate status`: a study's progress, per annotator and per item."""

from __future__ import annotations

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import console, note_store, print_json
from annotate.wording import count_of, shell_word


@app.command("status")
def status_command(
    ctx: typer.Context, study: str, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """Progress of a study: per annotator and per item."""
    from annotate.protocol.status import study_status
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    data = study_status(ws.engine, study_ctx)
    on_prolific = _prolific(ws.engine, study_ctx)
    if on_prolific:
        data["prolific"] = on_prolific
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
            f"{data['items_in_progress']} in progress, "
            + (
                f"{data['items_on_screen_unlabelled']} on a screen (no label yet), "
                if data["items_on_screen_unlabelled"]
                else ""
            )
            + f"{data['items_untouched']} untouched"
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
    # In words, as the console says them: a bare share misleads after an early stop or ties.
    out.print(Text(data["test_labels"]["words"]))
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
    hist = ", ".join(
        f"{count_of(int(n), 'label')}: {c}" for n, c in data["labels_per_item"].items()
    )
    out.print(Text(f"Items by number of labels (k = {data['annotators_per_item']}): {hist}"))
    f = data["flags"]
    out.print(
        Text(
            f"Flags: {f['total']} ({f['open']} open, {f['resolved']} resolved, {f['excluded']} "
            f"on excluded items); {count_of(f['excluded_items'], 'item')} excluded from scoring"
            + (f"; `annotate flags {shell_word(data['study'])}` lists them" if f["total"] else "")
        )
    )
    if "crowd" in data:
        from annotate.presentation.crowd_exits import exit_lines

        for line in exit_lines(data["crowd"]):
            out.print(Text(f"Crowd exits: {line}"))
    for p in on_prolific:
        counts = ", ".join(f"{k.lower()} {v}" for k, v in p["prolific"].items()) or "not read yet"
        seen = ", ".join(f"{k} {v}" for k, v in sorted(p["annotate"].items())) or "none"
        when = f" (as of {p['counted_at']})" if p["counted_at"] else ""
        out.print(
            Text(
                f"Prolific study {p['prolific_id']} ({p['role']}, {p['status']}): {counts}{when}; "
                f"annotate's visits by its link: {seen}"
            )
        )
    from annotate.store.label_times import last_activity_words

    when = data["last_activity"] or last_activity_words(data["label_times"])
    out.print(Text(f"Last activity: {when}"))
    for warning in data["warnings"]:
        out.print(Text(f"warning: {warning}", style="bold"))
        note_store(warning)


def _prolific(engine, study_ctx) -> list[dict]:
    """The study's Prolific studies as `prolific sync`/`status` last read them (no call)."""
    from annotate.platforms.prolific.studies import last_known

    return last_known(engine, study_ctx)


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
