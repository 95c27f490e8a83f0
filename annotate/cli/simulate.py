"""`annotate simulate`: synthetic annotators through the real engine, and the next step that
moves an incomplete simulated study on."""

from __future__ import annotations

import typer

from annotate.cli.context import Format, app, options
from annotate.cli.output import print_json, print_table, say
from annotate.wording import count_of, plural, shell_word


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
            f"at the gate: close it (`annotate gate {shell_word(study)} --close`)."
        )
    k = status["annotators_per_item"]
    if admitted >= k:
        return (
            "Enough are admitted: run them again to go on "
            f"(`annotate simulate {shell_word(study)} --annotators {annotators} "
            f"--accuracy {accuracy} --prefix {shell_word(prefix)}`)."
        )
    missing = k - admitted
    return (
        f"Add {missing} more (`annotate simulate {shell_word(study)} --annotators {missing} "
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
                "catch_answers": result.catch_answers,
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
        + (
            f" (and {count_of(result.catch_answers, 'catch answer')})"
            if result.catch_answers
            else ""
        )
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
