"""Screen snapshots: what the annotator and the curator see, drawn as SVG and compared with the
snapshots stored next to this file (tests/tui/__snapshots__/test_snapshots/).

Every layout (the first test item of each of the 21 built-in tasks), every screen of the
annotator app and of the curation app, each at 80x24 and 160x50. A difference fails the test;
after a deliberate change to the screens, review the new pictures and store them with
`pytest tests/tui/test_snapshots.py --snapshot-update`.

The pictures are the same on every run and machine: the elapsed-time clock is frozen, stores
are built fresh from fixed rows (ids from 1, samples drawn with the protocol's fixed seed), no
temp path reaches the screen and text cursors do not blink. Names and item text carry markup
look-alikes ([CLS], [/foo], [b]…[/b]) so the pictures also show they are drawn verbatim.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest_textual_snapshot import SVGImageExtension, node_to_report_path
from sqlalchemy import Engine
from syrupy.assertion import SnapshotAssertion
from syrupy.location import PyTestLocation
from syrupy.session import SnapshotSession
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea

import annotate.tui.app as label_app_module
import annotate.tui.widgets.status as status_module
from annotate.curation.examples import save_pair
from annotate.curation.review import submit_review
from annotate.curation.sets import create_set
from annotate.curation.validation import PairDraft
from annotate.protocol.session import AnnotatorSession
from annotate.tui.app import LabelApp, create_app
from annotate.tui.curate.app import create_curate_app
from annotate.tui.curate.screens.adjudicate import AdjudicateScreen
from annotate.tui.curate.screens.author import AuthorScreen
from annotate.tui.curate.screens.done import NothingLeftScreen
from annotate.tui.curate.screens.review import ReviewScreen
from annotate.tui.curate.widgets.label_choice import LabelChoice
from annotate.tui.curate.widgets.tag_picker import TagPicker
from annotate.tui.screens.discard import DiscardModal
from annotate.tui.screens.feedback import FeedbackScreen
from annotate.tui.screens.flag import FlagModal
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.help import HelpScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import (
    FinishedScreen,
    HeldScreen,
    RejectedScreen,
    WaitingScreen,
)
from tests import fixtures as fx
from tests.tui.support import (
    ONE_TRAINING_ITEM,
    QUICK_TEST,
    build_study,
    settle,
    wait_until,
    without_labels,
)
from tests.tui.task_data import (
    COPA_DEV,
    COPA_TEST,
    ITEM_SCREEN_DATA,
    LONG_PREMISE_TEST,
    RECORD_MANY_TEST,
    STSB_TEST,
    explained_task,
)

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 50), id="160x50")]
STUDY = "pilot [/s]"
ANNOTATOR = "[b]ana[/b]"
"""Names with markup look-alikes: the header must show them as typed."""

MARKUP_ROW = {
    "premise": "A [CLS] token opens the input [SEP] here.",
    "hypothesis": "stray [/foo] tag",
    "label": "not_entailment",
    "idx": 0,
}
"""A training item whose text Textual would mangle (or crash on) if it parsed markup."""


class FrozenClock:
    """Stands in for the `time` module where the app reads the clock (the elapsed-time display)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def same_picture_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The status line shows "time on item 00:00 · session 01:23" whatever the real time spent
    (a missing attribute, after a refactor, fails here loudly rather than letting the real
    clock into the pictures), and the terminal's colour settings do not reach the apps."""
    monkeypatch.setattr(label_app_module, "time", FrozenClock(1000.0))
    monkeypatch.setattr(status_module, "time", FrozenClock(1083.0))
    monkeypatch.delenv("NO_COLOR", raising=False)  # read when an app is created
    for name in ("TEXTUAL_THEME", "TEXTUAL_DIM_FACTOR", "TEXTUAL_COLOR_SYSTEM"):
        if os.environ.get(name):  # read when textual is imported: too late to undo here
            pytest.fail(f"unset {name} to compare screen snapshots", pytrace=False)


# --- reaching a screen -------------------------------------------------------------------------
def steady(app: App) -> None:
    """Text cursors stop blinking (shown, steady): a blink would make the picture depend on
    the moment it is taken."""
    for widget in app.screen.query("Input, TextArea"):
        assert isinstance(widget, Input | TextArea)
        widget.cursor_blink = False


async def arrive(pilot: Pilot, screen: type[Screen]) -> None:
    """Wait until `screen` is on top and mounted, then hold the cursors still. (The plugin
    then waits for idle and for animations before it takes the picture.)"""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, screen), screen.__name__)
    steady(pilot.app)


async def first_item(pilot: Pilot) -> None:
    """Leave the guidelines for the first item."""
    await arrive(pilot, GuidelinesScreen)
    await pilot.press("enter")
    await arrive(pilot, ItemScreen)


def annotator_app(engine: Engine, tmp_path: Path, task: str, **study) -> LabelApp:
    name = build_study(engine, tmp_path, task, name=STUDY, **study)
    return create_app(engine, name, ANNOTATOR, create_annotator=True)


def rte_app(
    engine: Engine, tmp_path: Path, overrides: dict, dev: list[dict] | None = None
) -> LabelApp:
    return annotator_app(
        engine,
        tmp_path,
        "superglue/rte",
        dev=dev if dev is not None else fx.SG_RTE,
        test=without_labels(fx.SG_RTE),
        overrides=overrides,
    )


# --- the annotator app ------------------------------------------------------------------------
class TestItemScreens:
    """The annotator starts a study and sees its first test item: one picture per task."""

    @pytest.mark.parametrize("size", SIZES)
    @pytest.mark.parametrize(
        "task",
        sorted(ITEM_SCREEN_DATA),
        ids=[t.replace("/", "-") for t in sorted(ITEM_SCREEN_DATA)],
    )
    def test_first_test_item(self, snap_compare, workspace, tmp_path, task, size):
        app = annotator_app(
            workspace.engine, tmp_path, task, test=ITEM_SCREEN_DATA[task], overrides=QUICK_TEST
        )

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)

        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestAnnotatorScreens:
    """The steps of the protocol around the items, and the dialogs over them."""

    @pytest.mark.parametrize("size", SIZES)
    def test_guidelines(self, snap_compare, workspace, tmp_path, size):
        """The annotator opens the study: task, guidelines, label-prior hint, keys."""
        app = rte_app(workspace.engine, tmp_path, {**ONE_TRAINING_ITEM, "training_items": 2})

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, GuidelinesScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_training_feedback(self, snap_compare, workspace, tmp_path, size):
        """The annotator answers a training item wrongly and sees the right answer."""
        app = rte_app(workspace.engine, tmp_path, ONE_TRAINING_ITEM, dev=[MARKUP_ROW])

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1")  # entailment; the gold label is not_entailment
            await arrive(pilot, FeedbackScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_training_feedback_with_explanation(
        self, snap_compare, workspace, tmp_path, monkeypatch, size
    ):
        """The annotator answers a training item of a task that explains its gold labels."""
        with explained_task(tmp_path, monkeypatch) as rows:
            app = annotator_app(
                workspace.engine,
                tmp_path,
                "custom/explained",
                dev=rows,
                test=without_labels(rows),
                overrides=ONE_TRAINING_ITEM,
            )

            async def run_before(pilot: Pilot) -> None:
                await first_item(pilot)
                await pilot.press("1")
                await arrive(pilot, FeedbackScreen)

            assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_waiting_for_the_gate(self, snap_compare, workspace, tmp_path, size):
        """The annotator finishes training under the median rule and waits for the cohort."""
        app = rte_app(workspace.engine, tmp_path, {**ONE_TRAINING_ITEM, "gate_rule": "median"})

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1")
            await arrive(pilot, FeedbackScreen)
            await pilot.press("enter")
            await arrive(pilot, WaitingScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_rejected(self, snap_compare, workspace, tmp_path, size):
        """The annotator misses the fixed threshold and is thanked and let go."""
        app = rte_app(
            workspace.engine, tmp_path, {**ONE_TRAINING_ITEM, "gate_threshold": 1.0}, [MARKUP_ROW]
        )

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1")  # wrong
            await arrive(pilot, FeedbackScreen)
            await pilot.press("enter")
            await arrive(pilot, RejectedScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_finished(self, snap_compare, workspace, tmp_path, size):
        """The annotator answers the last test item."""
        app = rte_app(workspace.engine, tmp_path, {**QUICK_TEST, "test_sample": 1})

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1")
            await arrive(pilot, FinishedScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_held_by_another_window(self, snap_compare, workspace, tmp_path, size):
        """The last item is on another annotator's screen: wait, it may come back."""
        app = rte_app(workspace.engine, tmp_path, {**QUICK_TEST, "test_sample": 2})
        study = app.session.ctx.study.name
        AnnotatorSession.open(workspace.engine, study, "bo", create_annotator=True).next_item()

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1")
            await arrive(pilot, HeldScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_help(self, snap_compare, workspace, tmp_path, size):
        """The annotator presses ? on an item."""
        app = rte_app(workspace.engine, tmp_path, QUICK_TEST)

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("question_mark")
            await arrive(pilot, HelpScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_flag_dialog(self, snap_compare, workspace, tmp_path, size):
        """The annotator presses f on an item and types a comment."""
        app = rte_app(workspace.engine, tmp_path, QUICK_TEST)

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("f")
            await arrive(pilot, FlagModal)
            pilot.app.screen.query_one(Input).value = "typo [/foo]"

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_flagged_item(self, snap_compare, workspace, tmp_path, size):
        """The annotator sends the flag dialog: the item says it is flagged, with the comment."""
        app = rte_app(workspace.engine, tmp_path, QUICK_TEST)

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("f")
            await arrive(pilot, FlagModal)
            pilot.app.screen.query_one(Input).value = "typo [/foo] in [CLS]"
            await pilot.press("enter")
            await arrive(pilot, ItemScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)


class TestScreenDetails:
    """Issue 15's screen fixes, each in a picture: the pinned hypothesis, ReCoRD's number keys
    and highlights, the feedback's words for COPA and STS-B, and the question before a flag is
    discarded (issue 11)."""

    @pytest.mark.parametrize("size", SIZES)
    def test_long_premise_keeps_the_hypothesis(self, snap_compare, workspace, tmp_path, size):
        """A 5,000-character premise scrolls; the hypothesis stays above the keys."""
        app = annotator_app(
            workspace.engine,
            tmp_path,
            "superglue/rte",
            test=LONG_PREMISE_TEST,
            overrides=QUICK_TEST,
        )

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_record_entity_keys(self, snap_compare, workspace, tmp_path, size):
        """Twelve numbered entities, the number keys in the answer bar, the highlights listed."""
        app = annotator_app(
            workspace.engine,
            tmp_path,
            "superglue/record",
            test=RECORD_MANY_TEST,
            overrides=QUICK_TEST,
        )

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("1", "1")  # entity 11 named in the cue, not stored yet

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    @pytest.mark.parametrize(
        ("task", "dev", "test", "key"),
        [
            ("superglue/copa", COPA_DEV, COPA_TEST, "1"),
            ("glue/stsb", fx.STSB_DEV, STSB_TEST, "3"),
        ],
        ids=["copa", "stsb"],
    )
    def test_feedback_says_what_answers_mean(
        self, snap_compare, workspace, tmp_path, task, dev, test, key, size
    ):
        """COPA's feedback quotes the choices; STS-B's gives the scale's anchors."""
        app = annotator_app(
            workspace.engine, tmp_path, task, dev=dev, test=test, overrides=ONE_TRAINING_ITEM
        )

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press(key)
            await arrive(pilot, FeedbackScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_discard_flag_question(self, snap_compare, workspace, tmp_path, size):
        """The annotator flags an item with a comment, then presses q before answering."""
        app = rte_app(workspace.engine, tmp_path, QUICK_TEST)

        async def run_before(pilot: Pilot) -> None:
            await first_item(pilot)
            await pilot.press("f")
            await arrive(pilot, FlagModal)
            pilot.app.screen.query_one(Input).value = "premise cut [/foo] off"
            await pilot.press("enter")
            await arrive(pilot, ItemScreen)
            await pilot.press("q")
            await arrive(pilot, DiscardModal)

        assert snap_compare(app, terminal_size=size, run_before=run_before)


# --- the curation app -------------------------------------------------------------------------
PAIR = PairDraft(
    premise="Ana gave Ben the [CLS] map.",
    hypothesis="Ana gave the [CLS] map to Ben [/foo].",
    forward="entailment",
    backward="entailment",
    tags=["Datives"],
    domain="Artificial",
    note="swapped the [b]objects[/b]",
)


@pytest.fixture
def curation(workspace):
    """A set `s` with one pair by ana (examples 1 and 2)."""
    create_set(workspace.engine, "s")
    save_pair(workspace.engine, "s", "ana", PAIR)
    return workspace.engine


async def fill_form(pilot: Pilot) -> None:
    screen = pilot.app.screen
    screen.query_one("#premise", TextArea).text = "The cat [sic] sat on the mat."
    screen.query_one("#hypothesis", TextArea).text = "The dog [/foo] sat on the mat."
    screen.query_one("#forward", LabelChoice).value = "neutral"
    screen.query_one("#backward", LabelChoice).value = "contradiction"
    screen.query_one(TagPicker).set_selected(["Lexical entailment", "Negation"])
    screen.query_one("#domain", Input).value = "Artificial"
    await pilot.pause()


class TestCurationScreens:
    """The curator writes pairs, reviews others' blind and settles disagreements."""

    @pytest.mark.parametrize("size", SIZES)
    def test_author_empty(self, snap_compare, curation, size):
        """The curator opens a set to write a new pair."""
        app = create_curate_app(curation, "s", "[b]cara[/b]")

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AuthorScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_author_filled(self, snap_compare, curation, size):
        """The curator has written both sentences, labelled both ways and tagged."""
        app = create_curate_app(curation, "s", "cara")

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AuthorScreen)
            await fill_form(pilot)
            steady(pilot.app)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_author_start_from_dialog(self, snap_compare, curation, size):
        """Ctrl+O on an empty form: the dialog asking which example to start from, an id typed."""
        from annotate.tui.curate.screens.start_from import AskStartingExample

        app = create_curate_app(curation, "s", "cara")

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AuthorScreen)
            await pilot.press("ctrl+o")
            await arrive(pilot, AskStartingExample)
            await pilot.press("1", "2")
            steady(pilot.app)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_author_problems(self, snap_compare, curation, size):
        """The curator presses Ctrl+S on a form that breaks the rules."""
        app = create_curate_app(curation, "s", "cara")
        app.NOTIFICATION_TIMEOUT = 600  # the "Not saved" toast stays however slow the machine

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AuthorScreen)
            for sentence in ("#premise", "#hypothesis"):
                pilot.app.screen.query_one(sentence, TextArea).text = "The gate is open."
            await pilot.press("ctrl+s")
            await wait_until(
                pilot,
                lambda: (
                    pilot.app.screen.query_one("#problems").display
                    and getattr(pilot.app.screen, "fault_focused", False)
                ),
                "the problems, and the focus on the first field at fault",
            )
            # The focus moves to the first field at fault and its column scrolls to it: the
            # picture waits for the scroll to end (it was once taken mid-scroll, and once
            # before the deferred focus had even moved).
            await settle(pilot)
            steady(pilot.app)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_tag_picker(self, snap_compare, curation, size):
        """The curator filters the phenomena and moves into the list."""
        app = create_curate_app(curation, "s", "cara")

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AuthorScreen)
            picker = pilot.app.screen.query_one(TagPicker)
            picker.set_selected(["Quantifiers"])
            picker.query_one("#tag-filter", Input).focus()
            picker.query_one("#tag-filter", Input).value = "neg"
            await pilot.press("down")  # into the list: the first match is highlighted
            steady(pilot.app)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_blind_review(self, snap_compare, curation, size):
        """A second curator reviews ana's example without seeing her label or tags."""
        app = create_curate_app(curation, "s", "ben", review=True)

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, ReviewScreen)
            await pilot.press("2")

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_adjudicate(self, snap_compare, curation, size):
        """A third curator settles the example two reviewers disagreed on."""
        submit_review(curation, "s", "ben", 1, "entailment", ["Datives"])
        submit_review(curation, "s", "ben", 2, "neutral", [], "[i]why[/i]")  # tags came with 1
        submit_review(curation, "s", "[b]cara[/b]", 2, "entailment", ["Datives"])
        app = create_curate_app(curation, "s", "dan", adjudicate=True)

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, AdjudicateScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)

    @pytest.mark.parametrize("size", SIZES)
    def test_nothing_left(self, snap_compare, curation, size):
        """The author opens the review queue: nothing of her own to review."""
        app = create_curate_app(curation, "s", "ana", review=True)

        async def run_before(pilot: Pilot) -> None:
            await arrive(pilot, NothingLeftScreen)

        assert snap_compare(app, terminal_size=size, run_before=run_before)


# --- the snapshots have teeth ------------------------------------------------------------------
REFERENCE = (TestAnnotatorScreens, TestAnnotatorScreens.test_finished, "80x24")
"""The stored picture the tests below compare with (the size is the plugin's default)."""

EXTRA_RULE = ".message-title { color: red; border: heavy red; }"
"""One rule more than app.tcss, on one widget of that screen."""


def reference_location(request: pytest.FixtureRequest) -> PyTestLocation:
    """Where syrupy keeps the REFERENCE test's snapshot: a stand-in for its pytest item, so
    this works when that test is not selected (`-k`) or runs on another xdist worker."""
    cls, function, size = REFERENCE
    module_id = request.node.nodeid.split("::")[0]
    name = f"{function.__name__}[{size}]"
    item = SimpleNamespace(
        path=request.node.path,
        obj=function,
        name=name,
        nodeid=f"{module_id}::{cls.__name__}::{name}",
    )
    return PyTestLocation(item)  # type: ignore[arg-type]


class TestSnapshotsHaveTeeth:
    """The finished screen, compared with its stored snapshot: as is, and with one more style."""

    @pytest.fixture
    def snapshot(self, request: pytest.FixtureRequest) -> SnapshotAssertion:
        """Stands in for syrupy's fixture (which `snap_compare` uses): the REFERENCE test's
        stored snapshot, read-only (never written, even under --snapshot-update) and kept out
        of syrupy's report (a session of its own)."""
        if request.config.option.update_snapshots:
            pytest.skip("compares with the stored snapshots, which this run rewrites")
        location = reference_location(request)
        stored = SVGImageExtension.get_location(test_location=location, index=0)
        assert Path(stored).exists(), f"the reference snapshot is missing: {stored}"
        return SnapshotAssertion(
            session=SnapshotSession(pytest_session=request.session),
            extension_class=SVGImageExtension,
            test_location=location,
            update_snapshots=False,
        )

    @pytest.fixture
    def finished_app(self, workspace, tmp_path) -> LabelApp:
        """The REFERENCE test's app, built the same way."""
        return rte_app(workspace.engine, tmp_path, {**QUICK_TEST, "test_sample": 1})

    @staticmethod
    async def run_before(pilot: Pilot) -> None:
        await first_item(pilot)
        await pilot.press("1")
        await arrive(pilot, FinishedScreen)

    def test_the_same_screen_matches(self, snap_compare, finished_app):
        """The control: the comparison below is with a snapshot that exists and fits."""
        assert snap_compare(finished_app, run_before=self.run_before)

    def test_a_changed_style_fails_the_comparison(self, snap_compare, finished_app, request):
        finished_app.CSS = EXTRA_RULE  # read at start-up, after app.tcss
        try:
            assert not snap_compare(finished_app, run_before=self.run_before)
        finally:
            # The plugin keeps each comparison for its HTML report of mismatches; this
            # mismatch is the point of the test, not a regression to report.
            node_to_report_path(request.node).unlink(missing_ok=True)
