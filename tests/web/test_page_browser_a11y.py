"""The annotator page as a screen reader meets it, in headless Chromium: what Chromium's own
accessibility tree (DevTools `Accessibility.getFullAXTree`) says of the focused control and
of the screen after each swap, for the layouts whose controls differ; and item text written
right to left, laid out as its script reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.keys import Keys

from annotate.protocol.studies import add_annotator
from tests.web.support import chromium, layout_study
from tests.web.support import served_page as serve
from tests.web.test_page_browser import WAIT_S, press, sign_in, then

pytestmark = pytest.mark.slow


@contextmanager
def signed_in_on_a_phone(workspace, tmp_path: Path, study: str) -> Iterator[Any]:
    """Chromium at a phone's size (390x844), signed in as "ana" to `study`'s page."""
    add_annotator(workspace.engine, "ana")
    with (
        serve(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, 390, 844) as d,
    ):
        sign_in(d, base)
        yield d


def ax_nodes(driver) -> list[dict]:
    """The page's accessibility tree as Chromium builds it: each node that is not ignored, as
    its role, name, description, whether it has the focus, its parent's node id, its heading
    level and its value (a field's text)."""
    nodes = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    out = []
    for node in nodes:
        if node.get("ignored"):
            continue
        props = {p["name"]: p["value"].get("value") for p in node.get("properties", [])}
        out.append(
            {
                "id": node["nodeId"],
                "parent": node.get("parentId"),
                "role": node.get("role", {}).get("value"),
                "name": node.get("name", {}).get("value", ""),
                "description": node.get("description", {}).get("value", ""),
                "focused": bool(props.get("focused"))
                and node.get("role", {}).get("value") != "RootWebArea",
                "level": props.get("level"),
                "value": node.get("value", {}).get("value"),
            }
        )
    return out


def focused(driver) -> dict:
    """The focused node, once the page's script has put the focus on the new screen: it does
    so as the swap settles, a moment after the screen is in the page (read before, nothing
    was focused: a failure in CI)."""
    from selenium.webdriver.support.ui import WebDriverWait

    def one(d) -> dict | None:
        nodes = [n for n in ax_nodes(d) if n["focused"]]
        return nodes[0] if len(nodes) == 1 else None

    return WebDriverWait(driver, WAIT_S).until(one)


def headings(driver, level: int = 1) -> list[str]:
    return [n["name"] for n in ax_nodes(driver) if n["role"] == "heading" and n["level"] == level]


def test_the_feedback_s_verdict_is_heard_with_the_focused_continue(workspace, tmp_path: Path):
    """After a training answer the focus is on "continue"; a screen reader says the verdict
    and the answers with it, and the verdict is the screen's heading."""
    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "2"), "feedback")  # the training item's gold is entailment
        node = focused(d)
        assert (node["role"], node["name"]) == ("link", "Continue (Enter)")
        assert node["description"].startswith("✗ Wrong"), node
        assert "Right answer" in node["description"] or "right:" in node["description"], node
        assert headings(d) == ["✗ Wrong"]


def test_the_feedback_s_explanation_is_heard_with_the_focused_continue(
    workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A task that explains its gold labels: the explanation, shown under the answers, is read
    with them on the focused "continue" (it was left out: heard only by reading on)."""
    from tests.tui.support import build_study, without_labels
    from tests.tui.task_data import explained_task

    with explained_task(tmp_path, monkeypatch) as rows:
        study = build_study(
            workspace.engine, tmp_path, "custom/explained", dev=rows, test=without_labels(rows),
            overrides={"training_items": 1, "gate_min_items": 1},
        )  # fmt: skip
        add_annotator(workspace.engine, "ana")
        with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
            sign_in(d, base)
            then(d, press(d, "2"), "feedback")
            node = focused(d)
    assert node["name"] == "Continue (Enter)"
    assert node["description"].startswith("✗ Wrong"), node
    assert "Why: Purring [/foo] is a [CLS] sound." in node["description"], node


def test_each_multirc_judgement_is_named_by_its_candidate_answer(workspace, tmp_path: Path):
    """A MultiRC candidate's True/False radios are a group named by the candidate's text, so
    the focused judgement says which answer it judges, not only "1 True"."""
    study = layout_study(workspace.engine, tmp_path, "multi_answer")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        texts = [e.text for e in d.find_elements("css selector", ".candidate .ctext")]
        nodes = ax_nodes(d)
        groups = {n["id"]: n["name"] for n in nodes if n["role"] == "radiogroup"}
        assert sorted(groups.values()) == sorted(texts) and len(texts) == 3
        node = focused(d)
        assert (node["role"], node["name"]) == ("radio", "1 True")
        parents = {n["id"]: n["parent"] for n in nodes}
        group = node["parent"]
        while group is not None and group not in groups:
            group = parents.get(group)
        assert groups.get(group) == texts[0]  # the first candidate's group


def test_the_exit_survey_s_text_answer_is_named_by_its_question(workspace, tmp_path: Path):
    """A free-text survey question's box has its question as its name, as the choice
    questions' groups do: the focus lands in it with the question read, not a bare "edit"."""
    from urllib.parse import urlencode

    from selenium.webdriver.common.keys import Keys

    from tests.crowd_helpers import prolific_query, short_study

    survey = [{"name": "remarks", "prompt": "Anything to tell us?"}]
    short_study(workspace.engine, tmp_path, survey=survey)
    with serve(workspace.engine, "pilot") as base, chromium(tmp_path) as d:
        d.get(base + "/?" + urlencode(prolific_query(1)))
        then(d, press(d, Keys.ENTER), "item")  # the guidelines' Start
        # two training items, each with its feedback ("continue": Enter), three test items
        for key, screen in [("1", "feedback"), (Keys.ENTER, "item")] * 2 + [("1", "item")] * 2:
            then(d, press(d, key), screen)
        then(d, press(d, "1"), "survey")
        node = focused(d)
        assert (node["role"], node["name"]) == ("textbox", "Anything to tell us?"), node


def test_a_refused_sign_in_is_read_with_the_field_the_focus_lands_in(workspace, tmp_path: Path):
    """A wrong token: the refusal is an alert, and the token field, where the focus lands,
    has it as its description (so is the name field's)."""
    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study) as base, chromium(tmp_path) as d:
        d.get(base + "/")
        d.find_element("id", "name").send_keys("ana")
        token = d.find_element("id", "token")
        then(d, lambda: token.send_keys("not the token", Keys.ENTER), "signin")
        error = d.find_element("id", "signin-error").text
        assert error and d.find_element("id", "signin-error").get_attribute("role") == "alert"
        node = focused(d)
        assert node["name"] == "Token"  # tokens required: no "if you were given one"
        assert node["description"] == error
        fields = [n for n in ax_nodes(d) if n["role"] == "textbox"]
        assert [n["description"] for n in fields] == [error, error]


def test_after_a_wrong_token_the_right_one_and_enter_sign_in(workspace, tmp_path: Path):
    """A mistyped token: the focus is in the token field, with the name as typed kept, so the
    right token and Enter sign in. The name was cleared while the focus went to the token:
    Enter then stopped at the empty name field, away from where the annotator was typing."""
    from selenium.webdriver.support.ui import WebDriverWait

    from annotate.protocol.tokens import add_annotator_with_token

    study = layout_study(workspace.engine, tmp_path, "pair")
    _, token = add_annotator_with_token(workspace.engine, "ana")
    with serve(workspace.engine, study) as base, chromium(tmp_path) as d:
        d.get(base + "/")
        d.switch_to.active_element.send_keys("ana", Keys.TAB, "not the token")
        then(d, press(d, Keys.ENTER), "signin")
        node = focused(d)
        assert node["name"] == "Token" and node["description"].startswith("Unknown name")
        fields = {n["name"]: n for n in ax_nodes(d) if n["role"] == "textbox"}
        assert fields["Your annotator name"]["value"] == "ana", fields
        then(d, press(d, token, Keys.ENTER), "guidelines")
        WebDriverWait(d, 5).until(lambda _: focused(d)["name"] == "Start (Enter)")


@pytest.mark.parametrize("layout", ["scale", "entity_choice"])
def test_each_item_screen_has_a_heading_saying_where_the_annotator_is(
    workspace, tmp_path: Path, layout: str
):
    """The item screen's heading (level 1, not drawn: the status bar shows the same words) says
    the phase and the count, on the item the server draws and on the one "continue" shows."""
    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, layout)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        assert headings(d) == [d.find_element("id", "status-text").text]
        assert headings(d)[0].startswith("Training 0/1")
        assert d.find_element("id", "item-heading").size["height"] <= 1  # not drawn
        then(d, press(d, "1"), "feedback")
        then(d, press(d, Keys.ENTER), "item")
        assert headings(d) == [d.find_element("id", "status-text").text]
        assert headings(d)[0].startswith("Test 0/2")


def test_the_comment_box_and_the_help_dialog_are_named(workspace, tmp_path: Path):
    """The flag's comment box keeps its name once typed in (a placeholder, its only name
    before, goes as the annotator types), and the help dialog is named by its heading."""
    from selenium.webdriver.support.ui import WebDriverWait

    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        press(d, "f")()
        WebDriverWait(d, 10).until(
            lambda _: d.switch_to.active_element.get_attribute("id") == "comment"
        )
        press(d, "the premise is cut off")()
        node = focused(d)
        assert node["role"] == "textbox", node
        assert node["name"] == "Comment: what is wrong with it? (sent with your answer)", node
        press(d, Keys.ESCAPE, "?")()
        WebDriverWait(d, 10).until(
            lambda _: d.find_element("id", "help-dialog").get_attribute("open") is not None
        )
        dialogs = [n["name"] for n in ax_nodes(d) if n["role"] == "dialog"]
        assert dialogs == ["Keys"], dialogs


def _rgb(css: str) -> tuple[float, ...]:
    """`rgb(r, g, b)` or `rgba(r, g, b, a)` as Chromium computes colours."""
    inside = css[css.index("(") + 1 : css.index(")")]
    return tuple(float(v) for v in inside.split(","))


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG 2's contrast ratio of two opaque colours."""

    def luminance(c: tuple[float, ...]) -> float:
        lin = [v / 255 / 12.92 if v / 255 <= 0.03928 else ((v / 255 + 0.055) / 1.055) ** 2.4
               for v in c[:3]]  # fmt: skip
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


EDGES = """
const el = document.getElementById(arguments[0]);
let back = el.parentElement;
while (back && getComputedStyle(back).backgroundColor.startsWith('rgba(0, 0, 0, 0')) {
  back = back.parentElement;
}
return [getComputedStyle(el).borderTopColor,
        back ? getComputedStyle(back).backgroundColor : 'rgb(255, 255, 255)'];
"""
"""A field's drawn edge and the colour behind the field (its nearest painted ancestor)."""


def test_every_text_field_s_edge_stands_out_from_what_is_behind_it(workspace, tmp_path: Path):
    """WCAG 1.4.11: the edge that shows where a field is needs 3:1 against its surroundings
    (the sign-in's name and token, the flag's comment box), as Chromium draws them."""
    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study) as base, chromium(tmp_path) as d:
        d.get(base + "/")
        ratios = {}
        for field in ("name", "token"):
            edge, behind = d.execute_script(EDGES, field)
            ratios[field] = _contrast(_rgb(edge), _rgb(behind))
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        d.find_element("css selector", "#flag summary").click()
        edge, behind = d.execute_script(EDGES, "comment")
        ratios["comment"] = _contrast(_rgb(edge), _rgb(behind))
    assert all(r >= 3 for r in ratios.values()), ratios


ENDS = """
const el = document.querySelector(arguments[0]);
const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
let node, text = null;
while ((node = walker.nextNode())) if (node.data.trim()) { text = node; break; }
const s = text.data.replace(/\\s+$/, "");
const range = document.createRange();
range.setStart(text, 0); range.setEnd(text, 1);
const first = range.getBoundingClientRect().left;
range.setStart(text, s.length - 1); range.setEnd(text, s.length);
return {first: first, last: range.getBoundingClientRect().left, text: s};
"""
"""Where the first and the last character of an element's first text are drawn."""

ARABIC = "أغلق الخباز المتجر عند الظهر."
HEBREW = "הדלת הייתה פתוחה."


def test_right_to_left_item_text_reads_from_the_right(workspace, tmp_path: Path):
    """An item written right to left (here COPA in Arabic and Hebrew) is laid out as its own
    script reads: its first word at the right, its full stop at the left end, in the premise,
    in an answer's text and in a comment typed in it; English text stays left to right."""
    from tests.tui.support import build_study

    rows = [
        {"premise": ARABIC, "choice1": HEBREW, "choice2": "The oven was hot.",
         "question": "cause", "label": 0, "idx": i}
        for i in range(2)
    ]  # fmt: skip
    study = build_study(
        workspace.engine, tmp_path, "superglue/copa", dev=rows[:1], test=rows[1:],
        overrides={"training_items": 1, "gate_min_items": 1, "gate_threshold": 0.0,
                   "test_sample": "all", "annotators_per_item": 1},
    )  # fmt: skip
    with signed_in_on_a_phone(workspace, tmp_path, study) as d:
        press(d, "f")()
        d.switch_to.active_element.send_keys(HEBREW)
        where = {
            "premise": d.execute_script(ENDS, "#field-premise .text"),
            "choice": d.execute_script(ENDS, "#field-choice1 .text"),
            "english": d.execute_script(ENDS, "#field-choice2 .text"),
        }
        comment = d.execute_script(
            "return getComputedStyle(document.getElementById('comment')).direction"
        )
    for part in ("premise", "choice"):
        assert where[part]["last"] < where[part]["first"], (part, where[part])
    assert where["english"]["first"] < where["english"]["last"], where["english"]
    assert comment == "rtl"


@pytest.mark.parametrize("layout", ["multi_answer", "entity_choice"])
def test_a_right_to_left_candidate_or_entity_reads_from_the_right(
    workspace, tmp_path: Path, layout: str
):
    """A MultiRC candidate answer or a ReCoRD entity written right to left is laid out as its
    script reads (its full stop, or last letter, at the left end), beside its number."""
    from tests.web.support import multirc_rows, record_rows, without_gold

    if layout == "multi_answer":
        task, rows = "superglue/multirc", multirc_rows(1)
        rows[0]["passage"]["questions"][0]["answers"][0]["text"] = HEBREW
        css = "#candidate-1"
    else:
        task, rows = "superglue/record", record_rows(1)
        rows[0]["passage"]["text"] = HEBREW + "\n@highlight\nRowers win"
        rows[0]["passage"]["entities"] = [{"start": 0, "end": len(HEBREW) - 1}]
        rows[0]["qas"][0]["answers"] = [{"start": 0, "end": len(HEBREW) - 1, "text": "x"}]
        css = ".entity[data-number='1'] span"
    from tests.tui.support import build_study

    study = build_study(
        workspace.engine, tmp_path, task, test=without_gold(rows, task),
        overrides={"training_items": 0, "test_sample": "all", "annotators_per_item": 1},
    )  # fmt: skip
    with signed_in_on_a_phone(workspace, tmp_path, study) as d:
        where = d.execute_script(ENDS, css)
    assert where["last"] < where["first"], where


def crowd_walk(driver, base: str) -> Iterator[str]:
    """A Prolific worker's way through `batch_study` by key: consent, guidelines, two training
    items each with its feedback, two test items, the survey, then the exit with the code.
    Yields the name of each screen once it is shown."""
    from urllib.parse import urlencode

    from tests.crowd_helpers import prolific_query

    driver.get(f"{base}/?{urlencode(prolific_query(1))}")
    yield "consent"
    steps = [(Keys.ENTER, "guidelines"), (Keys.ENTER, "item")]
    steps += [("1", "feedback"), (Keys.ENTER, "item")] * 2 + [("1", "item"), ("1", "survey")]
    for key, screen in steps:
        then(driver, press(driver, key), screen)
        yield screen
    then(driver, lambda: driver.find_element("id", "survey-send").click(), "exit")
    yield "exit"


def test_the_tab_s_title_says_where_the_worker_is_on_each_screen(workspace, tmp_path: Path):
    """The title (what a screen reader says on entering the tab, and the tab's own label) names
    the screen, and an item's count: swapped screens, the ready item "continue" shows
    included. It said the task and study alone, from consent to the completion code."""
    from tests.crowd_helpers import batch_study

    study = batch_study(workspace.engine, tmp_path, consent="We store your answers.").study.name
    with serve(workspace.engine, study) as base, chromium(tmp_path) as d:
        titles = [(screen, d.title) for screen in crowd_walk(d, base)]
    task = "RTE: Recognizing Textual Entailment"
    assert all(title.endswith(f" · {task} · {study}") for _, title in titles), titles
    said = [title.removesuffix(f" · {task} · {study}") for _, title in titles]
    assert said == [
        "Before you start",
        "Guidelines",
        "Training 0/2",
        "Feedback",
        "Training 1/2 · 100% right",  # the ready item, shown by page.js
        "Feedback",
        "Test 0/2",
        "Test 1/2",
        "A few questions",
        "Your completion code",
    ], titles


def test_each_crowd_screen_s_focus_says_what_the_screen_is(workspace, tmp_path: Path):
    """Where the focus lands on each screen a worker meets, a screen reader says what the
    screen is: the consent's "I agree" with the consent's words, "Start" with where the worker
    stands, the survey's first question (a choice: its group), the way back to Prolific with
    the completion code, and a screen with nothing to press (their link needed) its heading.
    It said "I agree", "Start", "main" and "Return to Prolific" alone."""
    from tests.crowd_helpers import batch_study

    survey = [
        {"name": "difficulty", "prompt": "How hard was it?", "kind": "choice",
         "choices": ["easy", "hard"]},
        {"name": "remarks", "prompt": "Anything to tell us?"},
    ]  # fmt: skip
    consent = "We store your answers under a pseudonym."
    study = batch_study(workspace.engine, tmp_path, consent=consent, survey=survey).study.name
    said = {}
    with serve(workspace.engine, study) as base, chromium(tmp_path) as d:
        for screen in crowd_walk(d, base):
            if screen != "item" and screen not in said:
                said[screen] = focused(d)
        code = d.find_element("id", "code").text
        d.delete_all_cookies()  # the session gone: the next screen asks for the link
        d.get(base + "/screen")
        said["link"] = focused(d)
    assert said["consent"]["name"] == "I agree"
    assert said["consent"]["description"] == f"Before you start {consent}"
    assert said["guidelines"]["name"] == "Start (Enter)"
    assert said["guidelines"]["description"].startswith("RTE: Recognizing Textual Entailment ")
    assert "training" in said["guidelines"]["description"]
    assert (said["survey"]["role"], said["survey"]["name"]) == ("radio", "(no answer)")
    assert said["exit"]["name"] == "Return to Prolific"
    assert said["exit"]["description"].startswith("Thank you ")
    assert said["exit"]["description"].endswith(f"Your completion code: {code}")
    assert (said["link"]["role"], said["link"]["name"]) == (
        "heading", "Open this study from your link"
    )  # fmt: skip


def test_each_screen_without_an_item_says_what_it_is_where_the_focus_lands(
    workspace, tmp_path: Path
):
    """A named annotator's screens without an item: the waiting screen's "Check now" is read
    with why there is nothing to do; the refusal and the last screen open at their heading
    (they opened on a nameless list of buttons); after quitting, "Sign in again" is read with
    the goodbye."""
    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "pair", test=1, gate_rule="manual")
    ctx = load_study(workspace.engine, study)
    add_annotator(workspace.engine, "ana")
    options = {"require_tokens": False, "poll_seconds": 0.5}

    def decide(admit: bool):
        return lambda: gate.decide_manually(workspace.engine, ctx, "ana", admit, reason="hand")

    with serve(workspace.engine, study, **options) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        then(d, press(d, Keys.ENTER), "waiting")
        waiting = focused(d)
        then(d, decide(False), "rejected")  # the poll shows it
        rejected = focused(d)
        then(d, decide(True), "item")
        then(d, press(d, "1"), "finished")
        finished = focused(d)
        then(d, press(d, "q"), "left")
        left = focused(d)
    assert waiting["name"] == "Check now (r)"
    assert waiting["description"].startswith(
        "Training finished — waiting for admission to the test phase You answered 1 training"
    ), waiting
    assert (rejected["role"], rejected["name"]) == ("heading", "Thank you for your work")
    assert (finished["role"], finished["name"]) == ("heading", "All done — thank you!")
    assert left["name"] == "Sign in again"
    assert left["description"].startswith("You have left the study Your answers are saved."), left


@contextmanager
def store_away(engine) -> Iterator[None]:
    """Every statement fails as on a database server that is down, until the block ends."""
    import psycopg
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    def gone(*_args) -> None:
        raise OperationalError("SELECT", {}, psycopg.OperationalError("server closed"))

    event.listen(engine, "before_cursor_execute", gone)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", gone)


def test_the_unreachable_screen_s_failed_retries_leave_the_focus_and_the_words_be(
    workspace, tmp_path: Path
):
    """The "Store unreachable" screen tries again every 3 s; each retry that failed again drew
    the screen anew, which put the focus back on "Try now" and a screen reader back at its
    start every 3 s. A failed retry now leaves the screen as it is; a retry that gets through
    shows the item."""
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.web.support import requested_urls

    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        with store_away(workspace.engine):
            then(d, press(d, "1"), "unreachable")
            retry = d.switch_to.active_element
            assert retry.text == "Try now"
            requested_urls(d)  # the log so far: from here on, the retries alone
            retries: list[str] = []

            def retried_twice(_) -> bool:
                retries.extend(requested_urls(d))
                return len(retries) >= 2

            WebDriverWait(d, 10, 0.5).until(retried_twice)
            assert d.switch_to.active_element == retry  # the same link, still focused
        then(d, lambda: None, "item")  # the next retry gets through


def live_words(driver) -> dict[int, str]:
    """Each live region of the page (Chromium's tree: a node with a `live` property, polite or
    assertive), by its DOM node, with the words in it."""
    nodes = driver.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    by_id = {node["nodeId"]: node for node in nodes}

    def words(node: dict) -> list[str]:
        if node.get("role", {}).get("value") == "StaticText":
            return [node.get("name", {}).get("value", "")]
        return [w for child in node.get("childIds", []) for w in words(by_id.get(child, {}))]

    regions = {}
    for node in nodes:
        props = {p["name"]: p["value"].get("value") for p in node.get("properties", [])}
        if props.get("live") in ("polite", "assertive") and "backendDOMNodeId" in node:
            regions[node["backendDOMNodeId"]] = " ".join(words(node))
    return regions


def said_by(driver, before: dict[int, str], words: str) -> bool:
    """Whether `words` are now in a live region that was in the page `before` (a region that
    comes with its words is shown, and often never read)."""
    return any(words in text for region, text in live_words(driver).items() if region in before)


def test_what_changes_without_a_page_load_is_said_by_a_region_already_there(
    workspace, tmp_path: Path
):
    """Words shown without a page load reach a screen reader: the notice that the test phase
    has begun (on the first test item, which "continue" shows), "your answer was not sent"
    when the server is out of reach, and that the item shown is the answer being revised. They
    were live regions that came with their words (which screen readers do not read), or none;
    they now change one that stays in the page."""
    from selenium.webdriver.support.ui import WebDriverWait

    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        before = live_words(d)
        then(d, press(d, Keys.ENTER), "item")  # the first test item, shown with no request
        WebDriverWait(d, 5, 0.2).until(
            lambda _: said_by(d, before, "Test phase: from now on there is no feedback.")
        )
        before = live_words(d)
        d.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
        press(d, "2")()
        WebDriverWait(d, 5, 0.2).until(lambda _: said_by(d, before, "your answer was not sent"))
        d.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
        then(d, press(d, "2"), "item")
        before = live_words(d)
        then(d, press(d, "u"), "item")  # back to the answer just given, to change it
        WebDriverWait(d, 5, 0.2).until(
            lambda _: said_by(d, before, "Revising your previous answer")
        )
