"""`annotate plan`: how many test items, labels, annotator-hours and how much money a study
needs for a target interval half-width (issue 16). The numbers come from
`annotate.scoring.plan`; this module gathers the inputs (a task and an accuracy, or a pilot
study) and renders the plan."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import console, print_json, warn
from annotate.wording import count_of

DEFAULT_SECONDS_PER_ITEM = 30.0
"""Assumed seconds per answer without a pilot (said in the output)."""
TIE_ASSUMPTIONS = {
    "random": "ties are settled at random (tie_rule random)",
    "abstain": "a tie has no answer and scores as wrong (tie_rule abstain)",
    "dev-majority-class": "ties go to the dev split's majority class, right as often as at "
    "random when the test classes are balanced (tie_rule dev-majority-class)",
    "extra-annotator": "a tie takes one more label at a time, at the mean accuracy, until it "
    "breaks (tie_rule extra-annotator)",
}
"""What the plan assumes of a split vote under each protocol tie rule."""


@dataclass
class PilotFacts:
    """What a plan takes from a pilot study."""

    task: str
    names: list[str]
    right: list[int]
    answers: list[int]
    """Each annotator's right answers of their test answers on items with gold."""
    test_seconds: float | None
    """Median seconds per test answer (None: no timed answers)."""
    training_seconds: float | None
    """Median seconds per training answer (None: no timed training answers)."""
    protocol: str = ""
    """The protocol the pilot ran (its preset's name)."""

    @property
    def accuracies(self) -> list[float]:
        return [r / n for r, n in zip(self.right, self.answers, strict=True)]


@app.command("plan")
def plan_command(
    ctx: typer.Context,
    task: str | None = typer.Option(
        None, "--task", help="The task, e.g. superglue/rte (default with --pilot: the pilot's)"
    ),
    accuracy: float | None = typer.Option(
        None, "--accuracy", min=0.0, max=1.0, help="Expected single-annotator accuracy"
    ),
    pilot: str | None = typer.Option(
        None,
        "--pilot",
        help="A pilot study: its annotators' right and wrong answers (their accuracies, with "
        "the uncertainty of a few items) and median seconds per answer (instead of --accuracy)",
    ),
    k: int | None = typer.Option(
        None, "--k", min=1, help="Annotators per item (default: the protocol's)"
    ),
    half_width: float = typer.Option(
        ..., "--half-width", min=0.001, max=0.5, help="Target 95% interval half-width, e.g. 0.03"
    ),
    protocol: str = typer.Option(
        None,
        "--protocol",
        help="Protocol preset (k, training items; default: ANNOTATE_DEFAULT_PROTOCOL or the "
        "project file's default_protocol, else superglue-2019)",
    ),
    annotators: int | None = typer.Option(
        None, "--annotators", min=1, help="Annotators to train (default: k)"
    ),
    seconds_per_item: float | None = typer.Option(
        None,
        "--seconds-per-item",
        min=0.1,
        help="Seconds per answer (default: the pilot's medians per test and per training "
        f"answer, else {DEFAULT_SECONDS_PER_ITEM:g})",
    ),
    settings: list[str] = typer.Option(
        [], "--set", help="KEY=VALUE: hourly_rate=23.75 estimates the cost"
    ),
    verify: int = typer.Option(
        0, "--verify", min=0, help="Check by N seeded simulated studies of the planned size"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of --verify and of a pilot's posterior draws"),
    assurance: float | None = typer.Option(
        None,
        "--assurance",
        min=0.5,
        max=0.999,
        help="With --pilot: the probability, given the pilot's few answers, that the study's "
        "majority accuracy needs no more items for --half-width than planned (0.975: sized at "
        "the lower end of its 95% interval)",
    ),
    fmt: Format = typer.Option(Format.table, "--format"),
) -> None:
    """Plan a study's size for a target precision: test items, labels, annotator-hours, cost,
    and the interval's half-width against the number of items (95% Wilson, the report's
    headline interval for accuracy)."""
    from annotate import specs
    from annotate.cli.report import _hourly_rate
    from annotate.errors import UserError
    from annotate.scoring import plan as planning

    protocol = protocol or specs.default_protocol()
    hourly_rate = _hourly_rate(settings)
    if (accuracy is None) == (pilot is None):
        raise UserError("give --accuracy P or --pilot STUDY (one of them)")
    if assurance is not None and pilot is None:
        raise UserError(
            "--assurance goes with --pilot: a given --accuracy has no uncertainty to be sure of"
        )
    facts: PilotFacts | None = None
    pilot_task: str | None = None
    seconds_source = "assumed"
    training_seconds: float | None = None
    if pilot is not None:
        facts = _pilot(options(ctx).workspace(), pilot)
        accuracies, pilot_task = facts.accuracies, facts.task
        task = task or pilot_task
        if seconds_per_item is None and facts.test_seconds is not None:
            seconds_per_item = facts.test_seconds
            training_seconds, seconds_source = _pilot_seconds(pilot, facts)
    else:
        assert accuracy is not None
        accuracies = [accuracy]
    if task is None:
        raise UserError("name the task: --task superglue/rte")
    try:
        spec = specs.load_task(task)
        proto = specs.load_protocol(protocol).effective(spec.name)
    except specs.SpecError as exc:
        raise UserError(str(exc)) from None
    if pilot_task is not None and spec.name != pilot_task:
        raise UserError(
            f"pilot {pilot} is a study of {pilot_task}, not {spec.name}: its annotators' "
            "accuracies do not carry over to another task (leave out --task)"
        )
    if spec.kind != "classification":
        raise UserError(
            f"plan covers classification tasks (scored by accuracy); {spec.name} is {spec.kind}"
        )
    k = k or proto.annotators_per_item
    ran = f"; the pilot ran {facts.protocol}" if facts and facts.protocol != proto.name else ""
    assumptions = [
        f"the study follows protocol {proto.name} ({proto.training_items} training items, ties: "
        f"{proto.tie_rule}; --protocol plans another){ran}",
        "wrong answers fall evenly on the other classes; " + TIE_ASSUMPTIONS[proto.tie_rule],
        "items are independent (the Wilson interval over test items)",
    ]
    if list(spec.metrics) != ["accuracy"]:
        assumptions.append(
            f"{spec.name} is scored by {', '.join(spec.metrics)}: its report quotes a bootstrap "
            "interval; the plan sizes the accuracy's Wilson interval"
        )
    if facts is not None:
        assumptions.append(
            "the study's annotators are the pilot's (each item's k a random set of them), each "
            "annotator's accuracy a Beta posterior from their right and wrong pilot answers "
            "(Jeffreys prior), independent of the others'"
        )
    if seconds_per_item is None:
        seconds_per_item = DEFAULT_SECONDS_PER_ITEM
    elif seconds_per_item == float("inf"):
        raise UserError("--seconds-per-item must be a number of seconds, not inf")
    if seconds_source == "assumed":
        assumptions.append(f"{seconds_per_item:.3g} seconds per answer (--seconds-per-item)")
    try:
        result = planning.make_plan(
            task=spec.name,
            n_classes=len(spec.labels),
            k=k,
            half_width=half_width,
            accuracies=accuracies,
            seconds_per_item=seconds_per_item,
            seconds_source=seconds_source,
            annotators=annotators or k,
            training_items=proto.training_items,
            hourly_rate=hourly_rate,
            interval_method="Wilson score interval, 95%, over test items",
            assumptions=assumptions,
            pilot=pilot,
            pilot_names=None if facts is None else facts.names,
            pilot_right=None if facts is None else facts.right,
            pilot_answers=None if facts is None else facts.answers,
            seed=seed,
            tie_rule=proto.tie_rule,
            training_seconds_per_item=training_seconds,
            assurance=planning.ASSURANCE if assurance is None else assurance,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    checked = (
        planning.verify(result, verify, seed, None if facts is None else accuracies)
        if verify
        else None
    )
    if fmt is Format.json:
        data: dict[str, Any] = asdict(result)
        if checked is not None:
            data["verify"] = asdict(checked)
        print_json(data)
        return
    _render(result, checked)


def _pilot_seconds(pilot: str, facts: PilotFacts) -> tuple[float | None, str]:
    """Seconds per training answer and where both medians came from. Training answers come
    with feedback and a first reading of the guidelines: timed by their own median when the
    pilot has one, else by the test answers' median."""
    if facts.training_seconds is not None:
        return facts.training_seconds, (
            f"medians of pilot {pilot}: per test answer for test labels, per training answer "
            "for training labels"
        )
    return None, (
        f"median of pilot {pilot} per test answer, for training labels too (it has no timed "
        "training answers)"
    )


def _pilot(ws: Any, study: str) -> PilotFacts:
    """Each pilot annotator's right answers and test answers against gold, and the medians of
    seconds per test answer and per training answer."""
    from annotate.errors import UserError
    from annotate.protocol.timing import median_seconds
    from annotate.report.data.coding import code_study
    from annotate.report.data.loading import answer_seconds, load_study_data

    data = load_study_data(ws.engine, study)
    coded = code_study(data)
    if coded.kind != "classification":
        raise UserError(f"pilot {study}: plan covers classification tasks")
    gold = coded.gold_code[coded.label_unit]
    has_gold = gold >= 0
    who = coded.label_annotator
    names, right, answers = [], [], []
    for index, name in enumerate(coded.annotators):
        mine = (who == index) & has_gold
        if mine.any():
            names.append(name)
            right.append(int((coded.label_code[mine] == gold[mine]).sum()))
            answers.append(int(mine.sum()))
    if not names:
        raise UserError(f"pilot {study}: no test answers on items with gold labels")
    return PilotFacts(
        task=data.spec.name,
        names=names,
        right=right,
        answers=answers,
        test_seconds=median_seconds(coded.row_seconds),
        training_seconds=median_seconds(answer_seconds(ws.engine, data.study_id, "training")),
        protocol=data.protocol.name,
    )


def _render(plan: Any, checked: Any) -> None:
    from rich.table import Table

    from annotate.terminal_text import SafeText as Text

    out = console()
    hours = plan.annotator_hours
    spread = plan.pilot_uncertainty
    sized = "" if spread is None else f", {spread.sized_at}"
    out.print(
        Text(
            f"{plan.task}: {plan.items} test items for ±{plan.target_half_width * 100:.1f} points "
            f"(95% Wilson half-width {plan.half_width * 100:.2f} at majority-of-{plan.k} "
            f"accuracy {plan.planning_accuracy * 100:.1f}%{sized})",
            style="bold",
        )
    )
    lines = [
        f"Single-annotator accuracy {plan.annotator_accuracy:.3f}"
        + (
            f" (pilot {plan.pilot}, {count_of(len(plan.pilot_accuracies), 'annotator')})"
            if plan.pilot
            else ""
        )
        + ("" if spread is None else ": the mean of their point estimates"),
        f"Majority accuracy: {plan.majority_accuracy_method}",
    ]
    if spread is not None:
        capped = plan.planning_accuracy == plan.majority_accuracy
        lines += [
            f"Majority accuracy with the pilot's uncertainty: point estimate "
            f"{plan.majority_accuracy * 100:.1f}%, {spread.level:.0%} interval "
            f"[{spread.majority_accuracy_low * 100:.1f}, {spread.majority_accuracy_high * 100:.1f}]"
            f" (median {spread.majority_accuracy_median * 100:.1f}) from {spread.draws:,} draws of "
            f"each annotator's accuracy from its {spread.prior} posterior, seed {spread.seed}",
            f"Items sized at {plan.planning_accuracy * 100:.1f}% ({spread.sized_at}): given "
            f"the pilot, the study's majority accuracy is that far from 50% or farther with "
            # sized at the point estimate, nearer 50% than the assurance asks: more likely
            f"{'at least ' if capped else ''}{spread.assurance:.0%} probability, and there the "
            "interval is at most "
            f"±{plan.target_half_width * 100:.1f} points (the Wilson interval is widest near "
            "50%; a study's own interval also varies with its items, as --verify shows; "
            "--assurance 0.975 sizes at the lower end of the 95% interval); the point estimate "
            f"alone would plan {spread.point_items} items",
        ]
    if plan.training_seconds_per_item != plan.seconds_per_item:
        timing = (
            f"at {plan.seconds_per_item:.3g} s per test answer and "
            f"{plan.training_seconds_per_item:.3g} s per training answer"
        )
    else:
        timing = f"at {plan.seconds_per_item:.3g} s per answer"
    lines += [
        f"Labels: {plan.test_labels} test ({plan.items} x {plan.k}"
        + (f" + {plan.extra_labels} expected for ties" if plan.extra_labels else "")
        + f") + {plan.training_labels} "
        f"training ({count_of(plan.annotators, 'annotator')})",
        f"Annotator-hours: {hours:.1f} {timing} ({plan.seconds_source})",
        "Cost: "
        + (
            f"{plan.cost:.2f} at {plan.hourly_rate:g} per hour (time on task only)"
            if plan.cost is not None
            else "pass --set hourly_rate=RATE"
        ),
    ]
    for line in lines:
        out.print(Text(line))
    table = Table(title=Text("Interval width against test items"), title_justify="left")
    for heading in ("Items", "Half-width", "Expected interval"):
        table.add_column(heading)
    for row in plan.width_table:
        mark = " ←" if row.items == plan.items else ""
        table.add_row(
            Text(f"{row.items}{mark}"),
            Text(f"±{row.half_width * 100:.2f}"),
            Text(f"[{row.interval_low * 100:.1f}, {row.interval_high * 100:.1f}]"),
        )
    out.print(table)
    if spread is not None:
        people = Table(title=Text("Pilot annotators (Jeffreys posterior)"), title_justify="left")
        for heading in ("Annotator", "Right", "Accuracy", f"{spread.level:.0%} interval"):
            people.add_column(heading)
        for a in spread.annotators:
            people.add_row(
                Text(a.name),
                Text(f"{a.right}/{a.answers}"),
                Text(f"{a.accuracy:.3f}"),
                Text(f"[{a.interval_low:.3f}, {a.interval_high:.3f}]"),
            )
        out.print(people)
    if checked is not None:
        out.print(Text(_verification_line(plan, checked)))
    for note in plan.assumptions:
        out.print(Text(f"assumes: {note}"))
    for warning in plan.warnings:
        warn(f"warning: {warning}")


def _verification_line(plan: Any, checked: Any) -> str:
    head = (
        f"Verified by {checked.studies} seeded studies of {checked.items} items "
        f"(simulated at the {checked.layer} layer, seed {checked.seed}): mean half-width "
        f"±{checked.mean_half_width * 100:.2f} "
        f"(median {checked.median_half_width * 100:.2f}, "
        f"max {checked.max_half_width * 100:.2f}"
    )
    if not checked.posterior:
        return (
            head
            + "; "
            + ("within" if checked.within_10_percent else "NOT within")
            + f" 10% of the target), coverage {checked.coverage * 100:.1f}%"
        )
    # Sized at the interval's conservative end, most studies come in under the target: the
    # share that does is the check, not the mean's distance from it.
    return (
        head + f"), {checked.share_within_target * 100:.1f}% of them at or under "
        f"±{plan.target_half_width * 100:.1f}; each drew the annotators' accuracies from the "
        f"pilot's posterior, and its interval held its own majority accuracy in "
        f"{checked.coverage * 100:.1f}% of them (coverage; mean drawn majority accuracy "
        f"{checked.true_majority_accuracy * 100:.1f}%)"
    )
