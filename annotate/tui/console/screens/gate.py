"""The gate: each trainee's items done, accuracy and decision (with its reason), what closing
now would decide against the projected median, and the three actions: close (median rule),
admit and reject (by hand, with a reason). Every action first shows its confirmation, with
exactly who is admitted and who rejected and the warnings; the engine refuses on warnings
unless the researcher forces it there.

The table fits the window (`Table.fill`): a long reason, then a long name, end in "…" there;
the line under the table has the selected trainee whole: name, decision and reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Static

from annotate.errors import UserError
from annotate.protocol import gate
from annotate.protocol.studies import StudyContext
from annotate.store.engine import HELD, is_held
from annotate.terminal_text import SafeText as Text
from annotate.tui.console.fmt import DASH, share
from annotate.tui.console.screens.base import STORE_AWAY, LiveScreen
from annotate.tui.console.screens.confirm import ConfirmScreen, plan_text, warnings_text
from annotate.tui.console.table import Column, Row, Table
from annotate.wording import fixed

NAME_CELLS = 12
"""A long trainee name or reason is cut to no fewer cells than this (whole in the line under
the table)."""
COLUMNS = (
    Column("trainee", "Trainee", squeeze=NAME_CELLS),
    Column("items", "Items"),
    Column("accuracy", "Accuracy", short="Acc."),
    Column("decision", "Decision"),
    Column("reason", "Reason", squeeze=NAME_CELLS, cut_first=True),
    Column("closing", "If closed now", short="If closed"),
)
"""The reason (a sentence, or the researcher's own words) is cut first."""
DECISION_STYLE = {"admitted": "green", "rejected": "red"}
CLOSED_NOTE = "Every trainee has a decision: nothing is left to close (a / x change one by hand)."


@dataclass(frozen=True)
class GateView:
    rows: list[dict[str, Any]]
    """`gate.gate_overview`: one per trainee."""
    plan: gate.GatePlan | None
    """What closing now would do (median rule, while someone is undecided)."""
    plan_note: str | None
    """Why there is no plan (another rule, nobody trained yet)."""
    closure: gate.Closure | None = None
    """Who closed training (and why, when forced)."""

    @property
    def closed(self) -> bool:
        """Training was closed and nobody has trained since: closing again decides no one."""
        return self.closure is not None and self.plan is not None and self.plan.decides_nobody


def gate_view(engine, ctx: StudyContext) -> GateView:  # type: ignore[no-untyped-def]
    rows = gate.gate_overview(engine, ctx)
    closure = gate.closure_of(engine, ctx)
    if ctx.protocol.gate_rule == "manual":  # no threshold applies: the researcher decides
        note = "The manual rule: you decide each trainee (a Admit, x Reject, with a reason)."
        return GateView(rows, None, note, closure)
    if ctx.protocol.gate_rule != "median":
        threshold = gate.rule_threshold(ctx.protocol)
        note = f"The {ctx.protocol.gate_rule} rule decides each trainee by itself" + (
            f" (accuracy >= {fixed(threshold)})." if threshold is not None else "."
        )
        return GateView(rows, None, note, closure)
    try:
        return GateView(rows, gate.preview_close(ctx=ctx, engine=engine), None, closure)
    except UserError as exc:  # nobody trained yet
        return GateView(rows, None, str(exc), closure)


def closing_now(view: GateView) -> dict[str, bool]:
    """Trainee -> admitted if the gate closed now (the median rule's plan; empty without)."""
    if view.plan is None:
        return {}
    return {o.name: o.admitted for o in [*view.plan.admit, *view.plan.reject]}


def closing_text(admitted: bool | None) -> Text:
    if admitted is None:
        return Text(DASH)
    return Text("admit" if admitted else "reject", style="green" if admitted else "red")


def trainee_cells(r: dict[str, Any], closing: bool | None) -> list[Text]:
    return [
        Text(r["name"]),
        Text(f"{r['training_done']}/{r['training_quota']}"),
        Text(share(r["training_accuracy"])),
        Text(r["gate"], style=DECISION_STYLE.get(r["gate"], "")),
        Text(r.get("reason") or DASH),
        closing_text(closing),
    ]


def trainee_detail(r: dict[str, Any], closing: bool | None) -> Text:
    """The selected trainee in full: the name and the reason uncut (the table may cut both)."""
    text = Text()
    text.append(r["name"], style="bold")  # (Text(name, style=) would make all of it bold)
    text.append(" · ")
    text.append(r["gate"], style=DECISION_STYLE.get(r["gate"], ""))
    if r.get("reason"):
        text.append(f": {r['reason']}")
    text.append(
        f" · {r['training_done']} of {r['training_quota']} training items, "
        f"accuracy {share(r['training_accuracy'])}"
    )
    if closing is not None:
        text.append(" · if closed now: ")
        text.append(closing_text(closing))
    return text


class GateScreen(LiveScreen[GateView]):
    BINDINGS = [
        Binding("c", "close_gate", "Close training"),
        Binding("a", "admit", "Admit"),
        Binding("x", "reject", "Reject"),
        Binding("escape,backspace", "back", "Back"),
    ]

    def __init__(self, ctx: StudyContext) -> None:
        super().__init__()
        self.ctx = ctx
        self.view: GateView | None = None

    def compose(self) -> ComposeResult:
        p = self.ctx.protocol
        yield Header()
        yield Static(
            Text(
                f"Gate · {self.ctx.study.name} · {p.gate_rule} rule · at least "
                f"{p.gate_min_items} training items · k = {self.ctx.k}",
                style="bold",
            ),
            classes="screen-title",
        )
        with VerticalScroll(id="gate-body"):
            yield Table(id="trainees", cursor_type="row", zebra_stripes=True)
            yield Static("", id="trainee-detail", markup=False)
            yield Static("", id="gate-plan")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#trainees", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Closing a cohort is the median rule's; the other rules decide each trainee alone.
        if action == "close_gate":
            closed = self.view is not None and self.view.closed  # nothing left to close
            return self.ctx.protocol.gate_rule == "median" and not closed
        return True

    def fetch(self, app: Any) -> GateView:
        return gate_view(app.engine, self.ctx)

    def show(self, data: GateView) -> None:
        self.view = data
        closing = closing_now(data)
        rows: list[Row] = [(r["name"], trainee_cells(r, closing.get(r["name"]))) for r in data.rows]
        self.query_one("#trainees", Table).fill(COLUMNS, rows)
        self.show_detail()
        body = Text()
        if data.closed:  # who closed it and when, in place of a plan that decides no one
            assert data.closure is not None
            body.append(data.closure.describe() + "\n", style="bold")
            body.append(CLOSED_NOTE, style="dim")
        elif data.plan is not None:
            body.append(
                f"Projected median accuracy: {fixed(data.plan.threshold)} · "
                if data.plan.threshold is not None
                else ""
            )
            body.append(
                f"closing now admits {len(data.plan.admit)}, rejects {len(data.plan.reject)}; "
                f"{data.plan.admitted_after} admitted in all (k = {data.plan.k})\n"
            )
            body.append(warnings_text(data.plan.warnings))
        elif data.plan_note:
            body.append(data.plan_note, style="dim")
        if data.closure is not None and not data.closed:
            body.append("\n" + data.closure.describe() + "\n", style="bold")
        if not data.rows:
            body.append("\nNobody has done any training yet.", style="dim")
        self.query_one("#gate-plan", Static).update(body)
        self.refresh_bindings()  # `c` is offered only while closing would decide someone

    def show_detail(self) -> None:
        """The line under the table follows its cursor."""
        line = self.query_one("#trainee-detail", Static)
        table = self.query_one("#trainees", DataTable)
        view = self.view
        if view is None or not view.rows or not table.row_count:
            line.update("")
            return
        r = view.rows[min(table.cursor_row, len(view.rows) - 1)]
        line.update(trainee_detail(r, closing_now(view).get(r["name"])))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def chosen(self) -> str | None:
        table = self.query_one("#trainees", DataTable)
        if not table.row_count:
            self.app.notify("There is no trainee to choose.", markup=False)
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key)

    # --- actions ------------------------------------------------------------------------------
    def action_close_gate(self) -> None:
        engine, ctx = self.app.engine, self.ctx  # type: ignore[attr-defined]
        try:
            plan = gate.preview_close(engine, ctx)
        except UserError as exc:
            self.app.notify_error(str(exc))  # type: ignore[attr-defined]
            return
        except HELD as exc:  # the store away: said, and the screen stays
            if not is_held(exc):
                raise
            self.app.notify_error(STORE_AWAY)  # type: ignore[attr-defined]
            return

        by = self.app.researcher  # type: ignore[attr-defined]

        def act(reason: str, force: bool) -> str:
            made = gate.close_training(engine, ctx, force=force, by=by, reason=reason)
            admitted = sum(1 for d in made if d.admitted)
            return f"Training closed: {admitted} admitted, {len(made) - admitted} rejected."

        self.app.push_screen(
            ConfirmScreen(
                "Close training (median rule)",
                plan_text(plan),
                act,
                warnings=plan.warnings,
                # each trainee's reason is the rule's; forcing past warnings needs the
                # researcher's, stored with who forced it
                needs_reason=False,
                force_needs_reason=True,
            ),
            self._after,
        )

    def action_admit(self) -> None:
        self._manual(admit=True)

    def action_reject(self) -> None:
        self._manual(admit=False)

    def _manual(self, *, admit: bool) -> None:
        name = self.chosen()
        if name is None:
            return
        engine, ctx = self.app.engine, self.ctx  # type: ignore[attr-defined]
        try:
            plan = gate.preview_manual(engine, ctx, name, admit)
        except UserError as exc:
            self.app.notify_error(str(exc))  # type: ignore[attr-defined]
            return
        except HELD as exc:  # the store away: said, and the screen stays
            if not is_held(exc):
                raise
            self.app.notify_error(STORE_AWAY)  # type: ignore[attr-defined]
            return
        by = self.app.researcher  # type: ignore[attr-defined]

        def act(reason: str, force: bool) -> str:
            d = gate.decide_manually(
                engine, ctx, name, admit, reason=reason, force=force, decided_by=by
            )
            said = f"{d.name} {'admitted' if d.admitted else 'rejected'}: {d.reason}"
            note = d.labels_note()
            return said if note is None else f"{said}; {note}"

        self.app.push_screen(
            ConfirmScreen(
                f"{'Admit' if admit else 'Reject'} {name} by hand",
                plan_text(plan),
                act,
                warnings=plan.warnings,
            ),
            self._after,
        )

    def _after(self, done: bool | None) -> None:
        if done:
            self.reload()

    def action_back(self) -> None:
        self.dismiss()
