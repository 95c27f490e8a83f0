"""`annotate prolific …`: a crowd study's Prolific side through Prolific's API (the `prolific`
extra). The rules live in annotate/platforms/prolific/; these commands read options, call
them and print what they did. The API token is read from ANNOTATE_PROLIFIC_TOKEN only."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say, warn
from annotate.wording import count_of, shell_word

if TYPE_CHECKING:
    from annotate.platforms.prolific.client import Prolific

prolific_app = typer.Typer(
    help="Run a crowd study on Prolific through its API (token: ANNOTATE_PROLIFIC_TOKEN).",
    no_args_is_help=True,
)
app.add_typer(prolific_app, name="prolific")

API_URL = typer.Option(
    None,
    "--api-url",
    help="Prolific's API address (default ANNOTATE_PROLIFIC_API, else Prolific's)",
)


class Part(StrEnum):
    training = "training"
    test = "test"


def _client(api_url: str | None) -> Prolific:
    from annotate.errors import UserError
    from annotate.platforms.prolific.client import Prolific, token_from_settings
    from annotate.settings import PROLIFIC_ADDRESS, is_http_address, setting_error, settings

    if api_url is not None and not is_http_address(api_url):
        raise UserError(f"--api-url {api_url!r}: expected {PROLIFIC_ADDRESS}")
    if api_url is None:
        # Checked here, where it is used, not with the other settings: a mistyped address of
        # Prolific's API must not stop `init`, `serve` or `report`, which never call it.
        # (httpx's own error, "UnsupportedProtocol", would name neither variable nor value.)
        api_url = settings().prolific_api
        if not is_http_address(api_url):
            raise setting_error("prolific_api", f"expected {PROLIFIC_ADDRESS}")
    token = token_from_settings()
    return Prolific(token, api_url)


def _study(ctx: typer.Context, study: str, *, made: bool = True):
    """The store's engine and the study; `made`: it must have its Prolific studies already
    (checked before the token is asked for)."""
    from annotate.platforms.prolific import studies
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    studies.prolific_config(study_ctx)
    if made:
        studies.require_studies(ws.engine, study_ctx)
    return ws.engine, study_ctx


@prolific_app.command("create")
def create_command(
    ctx: typer.Context,
    study: str,
    url: str = typer.Option(..., "--url", help="Where `annotate serve` is reached (https://…)"),
    hourly_rate: float = typer.Option(
        ..., "--hourly-rate", help="Pay per hour: each study's reward is its time at this rate"
    ),
    pilot: str = typer.Option(
        None, "--pilot", help="A pilot study: its median seconds per answer sets the times"
    ),
    seconds_per_item: float = typer.Option(
        None, "--seconds-per-item", help="Seconds per answer (default: the pilot's, else 30)"
    ),
    training_places: int = typer.Option(
        None, "--training-places", min=1, help="Places in study A (default: twice study B's)"
    ),
    test_places: int = typer.Option(
        None,
        "--test-places",
        min=1,
        help="Places in study B (default: what k labels per item need)",
    ),
    workspace: str = typer.Option(
        None, "--workspace", help="Prolific workspace id (default: the token's first)"
    ),
    title: str = typer.Option(None, "--title", help="The studies' public title"),
    description: str = typer.Option(None, "--description", help="The studies' description"),
    checked: bool = typer.Option(
        False,
        "--checked",
        help="After a run that lost Prolific's answer: you removed on Prolific what it may "
        "have made, so create again",
    ),
    api_url: str = API_URL,
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Draft the training (A) and test (B) studies on Prolific from the annotate study: the
    link, every completion code with its action, the estimated time and reward, the places,
    and B's filter (the participant group `prolific group` fills after the gate). Their ids
    are stored with the study and accepted on its link."""
    from dataclasses import replace

    from annotate.cli.plan import DEFAULT_SECONDS_PER_ITEM, _pilot
    from annotate.platforms.prolific import studies

    engine, study_ctx = _study(ctx, study, made=False)
    source = "the default"
    if seconds_per_item is not None:
        source = "--seconds-per-item"
    elif pilot is not None:
        pilot_seconds = _pilot(options(ctx).workspace(), pilot).test_seconds
        if pilot_seconds is not None:
            seconds_per_item, source = pilot_seconds, f"median of pilot {pilot}"
    seconds = DEFAULT_SECONDS_PER_ITEM if seconds_per_item is None else seconds_per_item
    guess = studies.estimate(engine, study_ctx, seconds, source)
    if training_places is not None:
        guess = replace(guess, training_places=training_places)
    if test_places is not None:
        guess = replace(guess, test_places=test_places)
    with _client(api_url) as client:
        rows = studies.create(
            engine, study_ctx, client, url, guess, hourly_rate, workspace_id=workspace,
            title=title, description=description, checked=checked,
        )  # fmt: skip
    data = [
        {"role": r.role, "prolific_id": r.prolific_id, "status": r.status,
         "reward_cents": r.reward_cents, "group_id": r.group_id}
        for r in rows
    ]  # fmt: skip
    if fmt is Format.json:
        print_json({"study": study, "prolific": data, "estimate": guess.__dict__})
        return
    say(
        f"{study}: {guess.seconds_per_item:g} s per answer ({guess.source}); "
        f"study A {guess.training_minutes} min, {guess.training_places} places; "
        f"study B {guess.test_minutes} min, {guess.test_places} places"
    )
    for r in rows:
        say(
            f"  {studies.ROLE_TEXT[r.role]}: Prolific study {r.prolific_id} ({r.status}), "
            f"reward {r.reward_cents / 100:.2f}"
        )
    word = shell_word(study)
    say(f"Next: `annotate serve {word}` (reached at {url}, stored with the study), then "
        f"`annotate prolific publish {word} --part training`")  # fmt: skip


def _transition(ctx: typer.Context, study: str, part: Part, verb: str, api_url: str | None):
    from annotate.platforms.prolific import studies

    engine, study_ctx = _study(ctx, study)
    with _client(api_url) as client:
        row = studies.transition(engine, study_ctx, client, part.value, verb)
    say(f"{study}: Prolific study {row.prolific_id} ({studies.ROLE_TEXT[row.role]}): {row.status}")


PART = typer.Option(..., "--part", help="training (study A) or test (study B)")


@prolific_app.command("publish")
def publish_command(
    ctx: typer.Context, study: str, part: Part = PART, api_url: str = API_URL
) -> None:
    """Publish study A or B (one call); B once `prolific group` has filled its group."""
    _transition(ctx, study, part, "publish", api_url)


@prolific_app.command("pause")
def pause_command(
    ctx: typer.Context, study: str, part: Part = PART, api_url: str = API_URL
) -> None:
    """Pause study A or B (one call): pause A before `gate --close`, so nobody starts training
    after the median is taken; pause B when the items run out."""
    _transition(ctx, study, part, "pause", api_url)


@prolific_app.command("start")
def start_command(
    ctx: typer.Context, study: str, part: Part = PART, api_url: str = API_URL
) -> None:
    """Start a paused study again (one call)."""
    _transition(ctx, study, part, "start", api_url)


@prolific_app.command("stop")
def stop_command(ctx: typer.Context, study: str, part: Part = PART, api_url: str = API_URL) -> None:
    """Stop study A or B for good (one call)."""
    _transition(ctx, study, part, "stop", api_url)


@prolific_app.command("group")
def group_command(ctx: typer.Context, study: str, api_url: str = API_URL) -> None:
    """After `gate --close`: put the admitted workers into the participant group study B's
    filter allows (no allow-list to paste). A second run adds only the newly admitted."""
    from annotate.platforms.prolific import studies

    engine, study_ctx = _study(ctx, study)
    with _client(api_url) as client:
        group_id, admitted, added = studies.fill_group(engine, study_ctx, client)
    this_run = f"this run added {added}" if added else "this run added none"
    if admitted and not added:
        this_run += " (every admitted worker was in it already)"
    say(
        f"{study}: {count_of(admitted, 'admitted worker')} in participant group {group_id} "
        f"(study B's filter); {this_run}"
    )


@prolific_app.command("sync")
def sync_command(
    ctx: typer.Context,
    study: str,
    reject: list[str] = typer.Option(
        [], "--reject", help="Reject this worker's (pseudonym) or submission's submission"
    ),
    reason: str = typer.Option(
        None, "--reason", help="Why (at least 100 characters; sent to the participant, stored)"
    ),
    api_url: str = API_URL,
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Read every submission and reconcile it with annotate's visits: returned and timed-out
    sessions free their leases now; completed ones are approved after annotate's checks;
    anything else is listed with the reason (a rejection needs --reject and --reason)."""
    from annotate.errors import UserError
    from annotate.platforms.prolific import sync

    if reject and reason is None:
        raise UserError("--reject needs --reason (sent to the participant and stored)")
    if reason is not None and not reject:
        raise UserError(
            "--reason is the reason of a rejection: name whom it rejects with --reject "
            "(a pseudonym or a submission id); nothing was approved or rejected"
        )
    if reason is not None:
        sync.check_reason(reason)
    engine, study_ctx = _study(ctx, study)
    with _client(api_url) as client:
        found = sync.sync(engine, study_ctx, client, reject=dict.fromkeys(reject, reason or ""))
    rows = [f.__dict__ for f in found]
    if fmt is Format.json:
        print_json(rows)
        return
    counts: dict[str, int] = {}
    for f in found:
        counts[f.action] = counts.get(f.action, 0) + 1
    say(f"{study}: {count_of(len(found), 'submission')}: "
        + ", ".join(f"{a} {n}" for a, n in sorted(counts.items())))  # fmt: skip
    listed = [f for f in found if f.action in ("listed", "rejected", "freed", "settled")]
    if listed:
        print_table(
            [f.__dict__ for f in listed],
            [("role", "Study"), ("worker", "Worker"), ("submission", "Submission"),
             ("prolific_status", "On Prolific"), ("outcome", "Outcome"), ("action", "Done"),
             ("reason", "Why")],
            title=f"Submissions of {study} that need a word",
        )  # fmt: skip


@prolific_app.command("pay")
def pay_command(
    ctx: typer.Context,
    study: str,
    hourly_rate: float = typer.Option(..., "--hourly-rate", help="Pay per hour on task"),
    currency: str = typer.Option("GBP", "--currency", help="Your workspace's currency (printed)"),
    max_bonus: float = typer.Option(None, "--max-bonus", help="Pay no worker more than this"),
    yes: bool = typer.Option(False, "--yes", help="Pay the bonuses set up (without: show them)"),
    not_paid: list[str] = typer.Option(
        [],
        "--not-paid",
        help="After a run that lost Prolific's answer: you checked on Prolific that this "
        "payment (the id the warning names) was not made, so pay it (Prolific pays it again "
        "if it was; repeatable)",
    ),
    api_url: str = API_URL,
) -> None:
    """Bonuses through Prolific's bulk-bonus API: time on task at the rate, less the base
    rewards Prolific paid (none for a returned or timed-out submission), less what was paid
    before; set up and shown with Prolific's total, paid with --yes. A second run pays
    nothing twice and says what was paid already."""
    from annotate.platforms.prolific import bonus

    engine, study_ctx = _study(ctx, study)
    if not_paid:
        bonus.not_paid(engine, study_ctx, not_paid)
    with _client(api_url) as client:
        unrewarded = bonus.unrewarded(client, engine, study_ctx)
        run = bonus.plan(engine, study_ctx, hourly_rate, max_bonus=max_bonus, unrewarded=unrewarded)
        for key in run.unsure:
            warn(
                f"warning: payment {key} was asked for but its answer was lost: check it on "
                "Prolific; annotate counts it as paid and will not pay it again (if Prolific "
                f"did not pay it, run pay again with --not-paid {key})"
            )
        if run.already:
            paid = sum(run.already.values())
            say(f"{study}: already paid {paid:.2f} {currency} in bonuses to "
                f"{count_of(len(run.already), 'worker')}")  # fmt: skip
            for name, amount in sorted(run.already.items()):
                say(f"  {name}: {amount:.2f}")
        if run.rejected:
            say(f"{study}: no bonus for the time of a rejected submission: "
                + ", ".join(run.rejected))  # fmt: skip
        if run.unrewarded:
            say(f"{study}: no reward taken off for a submission returned or timed out "
                "(Prolific paid none): " + ", ".join(run.unrewarded))  # fmt: skip
        if not run.batches:
            say(f"{study}: no bonus left to pay")
            return
        bonus.set_up(engine, study_ctx, client, run)
        for b in run.batches:
            total = "-" if b.total_cents is None else f"{float(b.total_cents) / 100:.2f}"
            say(
                f"{study}: {count_of(len(b.owed), 'bonus')} on Prolific study "
                f"{b.prolific_id} ({b.role}): {sum(o.amount for o in b.owed):.2f} {currency}; "
                f"Prolific's total with fees {total}"
            )
        if not yes:
            say(f"Nothing paid yet: run again with --yes to pay {run.total:.2f} {currency}.")
            return
        bonus.pay_all(engine, study_ctx, client, run, hourly_rate=hourly_rate, currency=currency)
    paid = [b for b in run.batches if b.paid]
    say(f"{study}: paid {sum(o.amount for b in paid for o in b.owed):.2f} {currency} "
        f"to {count_of(sum(len(b.owed) for b in paid), 'worker')}")  # fmt: skip


@prolific_app.command("status")
def status_command(
    ctx: typer.Context,
    study: str,
    api_url: str = API_URL,
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Each Prolific study's status and submissions (active, awaiting review, approved,
    returned, timed out) beside annotate's visits by its link."""
    from annotate.platforms.prolific import studies

    engine, study_ctx = _study(ctx, study)
    with _client(api_url) as client:
        rows = studies.status(engine, study_ctx, client)
    if fmt is Format.json:
        print_json({"study": study, "prolific": rows})
        return
    table = []
    for r in rows:
        p, a = r["prolific"], r["annotate"]
        table.append(
            {
                "role": studies.ROLE_TEXT[r["role"]],
                "id": r["prolific_id"],
                "status": r["status"],
                "prolific": ", ".join(f"{k.lower()} {v}" for k, v in p.items()),
                "annotate": ", ".join(f"{k} {v}" for k, v in sorted(a.items())) or "-",
            }
        )
    print_table(
        table,
        [("role", "Study"), ("id", "Prolific id"), ("status", "Status"),
         ("prolific", "Prolific's submissions"), ("annotate", "annotate's visits")],
        title=f"{study} on Prolific",
    )  # fmt: skip
