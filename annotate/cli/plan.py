"""`annotate plan`: how many test items, labels, annotator-hours and how much money a study
needs for a target interval half-width (issue 16). The numbers come from
`annotate.scoring.plan`; this module gathers the inputs (a task and an accuracy, or a pilot
study) and renders the plan."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import console, print_json, warn

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
        help="A pilot study: its annotators' accuracies and seconds per item (instead of "
        "--accuracy)",
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
        help=f"Seconds per answer (default: the pilot's median, else {DEFAULT_SECONDS_PER_ITEM:g})",
    ),
    settings: list[str] = typer.Option(
        [], "--set", help="KEY=VALUE: hourly_rate=23.75 estimates the cost"
    ),
    verify: int = typer.Option(
        0, "--verify", min=0, help="Check by N seeded simulated studies of the planned size"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of --verify"),
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
    names: list[str] | None = None
    pilot_task: str | None = None
    seconds_source = "assumed"
    if pilot is not None:
        accuracies, names, pilot_seconds, pilot_task = _pilot(options(ctx).workspace(), pilot)
        task = task or pilot_task
        if seconds_per_item is None and pilot_seconds is not None:
            seconds_per_item, seconds_source = pilot_seconds, f"median of pilot {pilot}"
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
    assumptions = [
        "wrong answers fall evenly on the other classes; " + TIE_ASSUMPTIONS[proto.tie_rule],
        "items are independent (the Wilson interval over test items)",
    ]
    if list(spec.metrics) != ["accuracy"]:
        assumptions.append(
            f"{spec.name} is scored by {', '.join(spec.metrics)}: its report quotes a bootstrap "
            "interval; the plan sizes the accuracy's Wilson interval"
        )
    if seconds_per_item is None:
        seconds_per_item = DEFAULT_SECONDS_PER_ITEM
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
            pilot_names=names,
            seed=seed,
            tie_rule=proto.tie_rule,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    checked = (
        planning.verify(result, verify, seed, None if names is None else accuracies)
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


def _pilot(ws: Any, study: str) -> tuple[list[float], list[str], float | None, str]:
    """Each pilot annotator's test accuracy against gold and the median seconds per answer."""
    from annotate.errors import UserError
    from annotate.protocol.timing import median_seconds
    from annotate.report.data.coding import code_study
    from annotate.report.data.loading import load_study_data

    data = load_study_data(ws.engine, study)
    coded = code_study(data)
    if coded.kind != "classification":
        raise UserError(f"pilot {study}: plan covers classification tasks")
    gold = coded.gold_code[coded.label_unit]
    has_gold = gold >= 0
    who = coded.label_annotator
    accuracies, names = [], []
    for index, name in enumerate(coded.annotators):
        mine = (who == index) & has_gold
        if mine.any():
            names.append(name)
            accuracies.append(float((coded.label_code[mine] == gold[mine]).mean()))
    if not names:
        raise UserError(f"pilot {study}: no test answers on items with gold labels")
    return accuracies, names, median_seconds(coded.row_seconds), data.spec.name


def _render(plan: Any, checked: Any) -> None:
    from rich.table import Table

    from annotate.terminal_text import SafeText as Text

    out = console()
    hours = plan.annotator_hours
    out.print(
        Text(
            f"{plan.task}: {plan.items} test items for ±{plan.target_half_width * 100:.1f} points "
            f"(95% Wilson half-width {plan.half_width * 100:.2f} at majority-of-{plan.k} "
            f"accuracy {plan.majority_accuracy * 100:.1f}%)",
            style="bold",
        )
    )
    lines = [
        f"Single-annotator accuracy {plan.annotator_accuracy:.3f}"
        + (f" (pilot {plan.pilot}, {len(plan.pilot_accuracies)} annotators)" if plan.pilot else ""),
        f"Majority accuracy: {plan.majority_accuracy_method}",
        f"Labels: {plan.test_labels} test ({plan.items} x {plan.k}"
        + (f" + {plan.extra_labels} expected for ties" if plan.extra_labels else "")
        + f") + {plan.training_labels} "
        f"training ({plan.annotators} annotators)",
        f"Annotator-hours: {hours:.1f} at {plan.seconds_per_item:.3g} s per answer "
        f"({plan.seconds_source})",
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
    if checked is not None:
        out.print(
            Text(
                f"Verified by {checked.studies} seeded studies of {checked.items} items "
                f"(simulated at the {checked.layer} layer, seed {checked.seed}): mean half-width "
                f"±{checked.mean_half_width * 100:.2f} "
                f"(median {checked.median_half_width * 100:.2f}, "
                f"max {checked.max_half_width * 100:.2f}; "
                + ("within" if checked.within_10_percent else "NOT within")
                + f" 10% of the target), coverage {checked.coverage * 100:.1f}%"
            )
        )
    for note in plan.assumptions:
        out.print(Text(f"assumes: {note}"))
    for warning in plan.warnings:
        warn(f"warning: {warning}")
