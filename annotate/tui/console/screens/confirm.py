"""The confirmation before any action that writes: what exactly will happen, the warnings, and
(where the action needs one) a reason. Enter confirms; Ctrl+F confirms despite the warnings
(force); Escape cancels.

The dialog runs the action itself, so a refusal (the engine's `GateRefused`, which computes its
plan again inside the write) stays on screen with the warnings that caused it, and the
researcher can force it or cancel. It closes with True once the action went through.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from annotate.errors import UserError
from annotate.protocol.gate import GatePlan, GateRefused
from annotate.store.engine import HELD, is_held
from annotate.terminal_text import SafeText as Text
from annotate.text import terminal_safe
from annotate.tui.console.screens.base import STORE_AWAY
from annotate.wording import fixed

Action = Callable[[str, bool], str]
"""(reason, force) -> what was done (one line, for a notification); raises UserError."""


def plan_text(plan: GatePlan) -> Text:
    """Exactly who will be admitted and who rejected, each with the reason."""
    text = Text()
    if plan.threshold is not None:
        text.append(f"Projected median accuracy: {fixed(plan.threshold)}\n")
    for title, outcomes, style in (
        ("Will be admitted", plan.admit, "green"),
        ("Will be rejected", plan.reject, "red"),
    ):
        text.append(f"{title} ({len(outcomes)}):\n", style=f"bold {style}")
        if not outcomes:
            text.append("  nobody\n", style="dim")
        for o in outcomes:
            text.append(f"  {o.name}", style="bold")
            if o.synthetic:
                text.append(" (synthetic)", style="dim")
            if o.reason:
                text.append(f": {o.reason}")
            text.append("\n")
    text.append(
        f"Admitted after this: {plan.admitted_after} (each item needs k = {plan.k})\n",
        style="bold",
    )
    for note in plan.notes:
        text.append(f"{note}\n")
    return text


def warnings_text(warnings: list[str]) -> Text:
    text = Text()
    for warning in warnings:
        text.append("⚠ ", style="bold yellow")
        text.append(f"{warning}\n", style="yellow")
    return text


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("enter", "confirm", "Confirm"),
        Binding("ctrl+f", "force", "Force", priority=True),
    ]

    def __init__(
        self,
        title: str,
        body: Text,
        act: Action,
        *,
        warnings: list[str] | None = None,
        needs_reason: bool = True,
        can_force: bool = True,
        force_needs_reason: bool = False,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.act = act
        self.warnings = list(warnings or [])
        self.needs_reason = needs_reason
        self.can_force = can_force
        self.force_needs_reason = force_needs_reason
        """The action itself needs no reason; going past its warnings does (stored)."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="confirm-dialog"):
            yield Static(Text(self.title_text, style="bold"), classes="dialog-title")
            yield Static(self.body, id="confirm-body")
            yield Static(warnings_text(self.warnings), id="confirm-warnings")
            if self.needs_reason:
                yield Input(placeholder="Reason (required, stored with the decision)", id="reason")
            elif self.force_needs_reason:
                yield Input(placeholder="Why force it (required with Ctrl+F, stored)", id="reason")
            yield Static(self._hint(), id="confirm-hint")
        yield Footer()

    def _hint(self) -> Text:
        parts = ["Enter confirms"]
        if self.can_force and self.warnings:
            parts.append("the warnings refuse it: Ctrl+F goes ahead anyway")
        parts.append("Escape cancels")
        return Text(" · ".join(parts), style="dim")

    @property
    def _has_reason_box(self) -> bool:
        return self.needs_reason or self.force_needs_reason

    def on_mount(self) -> None:
        if self._has_reason_box:
            self.query_one("#reason", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "force":
            return self.can_force
        return True

    def reason(self) -> str:
        return self.query_one("#reason", Input).value if self._has_reason_box else ""

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_confirm()

    def action_confirm(self) -> None:
        self._run(force=False)

    def action_force(self) -> None:
        self._run(force=True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def _run(self, *, force: bool) -> None:
        if (self.needs_reason or (force and self.force_needs_reason)) and not self.reason().strip():
            self._refuse("Type a reason first: it is stored with who, when and why.")
            return
        try:
            done = self.act(self.reason().strip(), force)
        except GateRefused as exc:
            self.warnings = exc.warnings
            self.query_one("#confirm-warnings", Static).update(warnings_text(exc.warnings))
            self._refuse("Refused because of the warnings above: nothing was changed.")
            return
        except UserError as exc:
            self._refuse(str(exc))
            return
        except HELD as exc:  # the store away: the dialog stays, to confirm again once back
            if not is_held(exc):
                raise
            self._refuse(STORE_AWAY)
            return
        self.app.notify(terminal_safe(done), timeout=6, markup=False)
        self.dismiss(True)

    def _refuse(self, message: str) -> None:
        text = Text(message, style="bold red")
        text.append("\n")
        text.append(self._hint())
        self.query_one("#confirm-hint", Static).update(text)
