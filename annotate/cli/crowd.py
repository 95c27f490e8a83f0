"""Commands for crowd studies: `study crowd` (platform settings and the links to paste),
`annotator show`, `pay` (the bulk-bonus file) and `survey` (exit-survey answers)."""

from __future__ import annotations

import csv
import io
from enum import StrEnum
from pathlib import Path

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.crowd_setup import crowd_settings, print_crowd
from annotate.cli.groups import annotator_app, study_app
from annotate.cli.output import print_json, print_table, say, warn
from annotate.errors import UserError
from annotate.text import neutralised
from annotate.wording import count_of, shell_word


@study_app.command("crowd")
def study_crowd(
    ctx: typer.Context,
    study: str,
    platform: str = typer.Option(None, "--crowd", help="prolific, mturk or link"),
    config_path: Path = typer.Option(
        None, "--config", help="The crowd TOML (replaces the stored settings; codes are kept)"
    ),
    platform_studies: list[str] = typer.Option(
        [], "--platform-study", help="Also accept this platform study id (every phase)"
    ),
    training_study: str = typer.Option(
        None, "--training-study", help="Two-study median gate: the training study's id"
    ),
    test_study: str = typer.Option(
        None, "--test-study", help="Two-study median gate: the test study's id"
    ),
    url: str = typer.Option(
        None,
        "--url",
        help="Where workers' browsers reach `annotate serve` (stored: serve's public address)",
    ),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Show or change a study's crowd settings, with the links to paste into the platform and
    the completion code of each outcome."""
    from annotate.protocol import crowd
    from annotate.protocol.studies import load_study

    if url is not None and not url.strip():
        raise UserError(
            "--url is empty: give the address workers' browsers reach `annotate serve` at "
            "(https://…)"
        )
    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    stored = crowd.config_of(study_ctx)
    changing = platform or config_path or platform_studies or training_study or test_study or url
    if changing:
        config = crowd_settings(
            platform,
            config_path,
            platform_studies,
            keep=stored,
            training_study=training_study,
            test_study=test_study,
            url=url,
        )
        crowd.set_config(ws.engine, study, config)
        if stored is not None and config.public_url != stored.public_url:
            _warn_drafts_keep(ws.engine, study_ctx, config.public_url)
    elif stored is None:
        raise UserError(
            f"study {study!r} has no crowd settings: `annotate study crowd "
            f"{shell_word(study)} --crowd prolific` (or --config FILE) adds them"
        )
    else:
        config = stored
    if fmt is Format.json:
        print_json(config.model_dump(mode="json"))
        return
    print_crowd(study, config)


def _warn_drafts_keep(engine, study_ctx, new_url: str | None) -> None:
    """The Prolific studies `prolific create` drafted keep the address they were drafted with
    in their link: workers would go on arriving there, and `serve` (taking the new one as its
    public address) refuses their answers."""
    from annotate.platforms.prolific.studies import prolific_studies

    made = [row.prolific_id for row in prolific_studies(engine, study_ctx)]
    if made:
        warn(
            f"warning: the Prolific studies `prolific create` drafted ({', '.join(made)}) keep "
            f"the address they were drafted with, not {new_url or 'this one'}: change their "
            "study URL on Prolific to the link below, or the page refuses their workers' answers"
        )


def _warn_paid_through_the_api(engine, study_ctx) -> None:
    """The bonus file counts every bonus owed from the start: what `prolific pay` paid through
    Prolific's API is in it again, and pasting it would pay that twice."""
    from annotate.platforms.prolific.bonus import paid_so_far

    paid, unsure = paid_so_far(engine, study_ctx)
    if paid or unsure:
        total, word = sum(paid.values()), shell_word(study_ctx.study.name)
        warn(
            f"warning: `annotate prolific pay {word}` has paid bonuses through "
            f"Prolific's API already ({total:.2f} to {', '.join(sorted(paid))}): "
            "this file's lines include them again, and pasting it would pay them twice; "
            f"`annotate prolific pay {word} --hourly-rate RATE` pays only "
            "what is owed"
        )


@annotator_app.command("show")
def annotator_show(
    ctx: typer.Context, name: str, fmt: Format = typer.Option(Format.table, "--format")
) -> None:
    """One annotator: their platform and platform id (shown nowhere else but pay files), and
    their visits to each study with the outcome."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.protocol.studies import get_annotator
    from annotate.store.models import Study, Visit

    engine = options(ctx).workspace().engine
    who = get_annotator(engine, name)
    with Session(engine) as session:
        visits = [
            {
                "study": study_name,
                "client": v.client,
                "link": v.link_role,
                "arrived_at": v.arrived_at.isoformat(timespec="seconds"),
                "departed_at": v.departed_at.isoformat(timespec="seconds")
                if v.departed_at
                else None,
                "outcome": v.outcome,
            }
            for v, study_name in session.execute(
                select(Visit, Study.name)
                .join(Study, Study.id == Visit.study_id)
                .where(Visit.annotator_id == who.id)
                .order_by(Visit.id)
            ).all()
        ]
    data = {
        "name": who.name,
        "platform": who.platform,
        "platform_id": who.platform_id,
        "token": who.token_hash is not None,
        "synthetic": who.synthetic,
        "created_at": who.created_at.isoformat(timespec="seconds"),
        "visits": visits,
    }
    if fmt is Format.json:
        print_json(data)
        return
    rows = [{"key": k, "value": v} for k, v in data.items() if k != "visits"]
    print_table(rows, [("key", "Field"), ("value", "Value")], title=f"Annotator {who.name}")
    if visits:
        print_table(
            visits,
            [
                ("study", "Study"),
                ("client", "Window"),
                ("link", "Link"),
                ("arrived_at", "Arrived"),
                ("departed_at", "Left"),
                ("outcome", "Outcome"),
            ],
            title="Visits",
        )


class PayFormat(StrEnum):
    prolific = "prolific"
    mturk = "mturk"
    link = "link"


@app.command("pay")
def pay_command(
    ctx: typer.Context,
    study: str,
    hourly_rate: float = typer.Option(..., "--hourly-rate", help="Pay per hour on task"),
    currency: str = typer.Option(
        None,
        "--currency",
        help="Currency of the rate, printed and in MTurk's bonus reason (default: USD with "
        "--format mturk, MTurk's currency; else GBP)",
    ),
    base: str = typer.Option(
        None,
        "--base-pay",
        help="The reward each platform study already pays a worker who takes it: an amount "
        "(every platform study) or STUDY=AMOUNT,STUDY=AMOUNT",
    ),
    max_bonus: float = typer.Option(
        None, "--max-bonus", help="Pay no worker more than this within one platform study"
    ),
    catch_bonus: str = typer.Option(
        None,
        "--bonus-catch-accuracy",
        help="MIN:AMOUNT: AMOUNT more for a catch accuracy of at least MIN (e.g. 0.8:0.50)",
    ),
    platform: PayFormat = typer.Option(
        ..., "--format", help="The bonus file: prolific, mturk, or link (id,amount a line)"
    ),
    to: Path = typer.Option(
        ...,
        "--to",
        help="The bonus file to write; with several platform study ids, one file each: "
        "FILE-STUDY_ID.csv",
    ),
) -> None:
    """Write the platform's bonus file: each worker's time on task (consent, guidelines,
    training, waiting, test) at the hourly rate, less the base reward, per platform study
    (a two-study gate's studies A and B each pay their own); print the total, the median
    effective hourly pay and who is paid below the rate. Prolific: the lines of its "bulk
    bonus payment" box. MTurk, which has no bulk-bonus upload: one line per SendBonus call
    (WorkerId, AssignmentId, BonusAmount, Reason, UniqueRequestToken) for a script to make.
    The generic link (`--crowd link`): `id,amount`, the id each worker's link carried, for
    your own payment system."""
    from annotate.protocol import pay
    from annotate.protocol.studies import load_study

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    if currency is None:
        currency, kept = pay.pay_currency(ws.engine, study_ctx, platform.value)
        if kept:
            warn(kept)
    plan = pay.plan_pay(
        ws.engine,
        study_ctx,
        platform.value,
        hourly_rate,
        currency=currency,
        base=pay.parse_base_pay(base),
        max_bonus=max_bonus,
        catch_bonus=pay.parse_catch_bonus(catch_bonus),
    )
    if not plan.workers:
        warn(f"warning: no {platform.value} worker has visited study {study!r} yet")
    if platform is PayFormat.prolific:
        _warn_paid_through_the_api(ws.engine, study_ctx)
    studies = plan.platform_studies or [None]
    files = []
    for platform_study in studies:
        part = plan.within(platform_study) if plan.workers else plan
        path = to if len(studies) == 1 else to.with_name(f"{to.stem}-{platform_study}{to.suffix}")
        lines = pay.bonus_lines(part, platform.value)
        try:
            path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror}") from None
        files.append((path, platform_study, part))
    pay.record_pay(ws.engine, study_ctx, plan)
    for path, platform_study, part in files:
        within = f" (platform study {platform_study})" if platform_study else ""
        bases = sorted({w.base for w in part.workers})
        base_text = "/".join(f"{b:.2f}" for b in bases) or "0.00"
        say(
            f"{path}{within}: {count_of(len(part.workers), 'worker')}, total "
            f"{part.total:.2f} {currency} (bonus; base {base_text} each on the platform), "
            f"{sum(w.seconds for w in part.workers) / 3600:.2f} hours on task"
        )
    if platform is PayFormat.mturk:
        say(
            "MTurk has no bulk-bonus upload: each line is one SendBonus call (WorkerId, "
            "AssignmentId, BonusAmount, Reason, UniqueRequestToken) for a script to make; "
            "the token makes a repeated call pay once"
        )
    median = plan.median_effective_hourly
    say(
        f"median effective hourly pay: "
        f"{'-' if median is None else f'{median:.2f}'} {currency}/h (rate {hourly_rate:.2f})"
    )
    below = plan.below_rate
    if not below:
        say(f"nobody is paid below {hourly_rate:.2f} {currency}/h")
    for w in below:
        rate = w.effective_hourly or 0.0
        say(f"  below the rate: {w.annotator}, {w.seconds / 60:.1f} min, {rate:.2f} {currency}/h")


@app.command("survey")
def survey_command(
    ctx: typer.Context,
    study: str,
    to: Path = typer.Option(None, "--to", help="Write the answers as CSV to this file"),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """The exit-survey answers of a crowd study, by pseudonym (never a platform id). In the
    CSV an answer a spreadsheet would take for a formula starts with ' (JSON keeps it as is)."""
    from sqlalchemy import select
    from sqlmodel import Session

    from annotate.protocol.studies import load_study
    from annotate.store.models import Annotator, SurveyAnswer

    ws = options(ctx).workspace()
    study_ctx = load_study(ws.engine, study)
    with Session(ws.engine) as session:
        rows = [
            {
                "annotator": name,
                "question": a.question,
                "answer": a.answer,
                "answered_at": a.answered_at.isoformat(timespec="seconds"),
            }
            for a, name in session.execute(
                select(SurveyAnswer, Annotator.name)
                .join(Annotator, Annotator.id == SurveyAnswer.annotator_id)
                .where(SurveyAnswer.study_id == study_ctx.id)
                .order_by(Annotator.name, SurveyAnswer.id)
            ).all()
        ]
    if to is not None:
        out = io.StringIO()
        writer = csv.DictWriter(out, ["annotator", "question", "answer", "answered_at"])
        writer.writeheader()
        writer.writerows({**row, "answer": neutralised(row["answer"])} for row in rows)
        try:
            to.write_text(out.getvalue(), encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {to}: {exc.strerror}") from None
        say(f"{to}: {count_of(len(rows), 'answer')}")
        return
    if fmt is Format.json:
        print_json(rows)
        return
    if not rows:  # an empty table would not say why
        say(no_survey_answers(study_ctx))
        return
    print_table(
        rows,
        [("annotator", "Annotator"), ("question", "Question"), ("answer", "Answer")],
        title=f"Exit survey of {study}",
    )


def no_survey_answers(study_ctx) -> str:
    """Why a study's exit survey has no answer to show: no crowd, no question, or none yet."""
    from annotate.protocol.crowd import config_of

    name = study_ctx.study.name
    config = config_of(study_ctx)
    if config is None:
        return f"{name} is not a crowd study, so it has no exit survey"
    if not config.survey:
        return f"{name} asks no exit-survey questions (a [[survey]] table in its crowd settings)"
    asked = count_of(len(config.survey), "question")
    return f"Exit survey of {name}: no answer yet ({asked} asked as a worker finishes)"
