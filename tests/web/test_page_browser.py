"""The annotator page in real headless Chromium (Debian's chromium + chromium-driver).

For the pair, COPA, MultiRC, ReCoRD and STS-B layouts, an annotator signs in, reads the
guidelines, answers a training item by key (and sees the gold answer), then test items by key
and by click; the pair study also flags an item with a comment and reloads mid-test. The
stored labels are checked in the store, and the DevTools log shows that no request left the
server's origin. At 390×844 and 1280×800 the answer controls are in view without scrolling.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from annotate.protocol.studies import add_annotator
from tests.web.support import chromium, labels, layout_study, need_chromium, requested_urls
from tests.web.support import served_page as serve

pytestmark = pytest.mark.slow

WAIT_S = 15
"""Bound on waiting for the page to draw the next screen (WebDriverWait polls for it)."""
SHOTS = os.environ.get("ANNOTATE_SCREENSHOTS")
"""A folder to keep the screenshots in (to look at them); default: the test's tmp_path."""


@pytest.fixture(autouse=True)
def _chromium():
    need_chromium()


def wait_for(driver, css: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


SCREEN_NAME = "var s = document.querySelector('[data-screen]'); return s && s.dataset.screen;"


def screen_name(driver) -> str:
    """The name of the screen on the page, read in one step in the page: found first and read
    after, a screen swapped in between (a retry that got through) left a stale reference."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(lambda d: d.execute_script(SCREEN_NAME))


def then(driver, action, screen: str):
    """Do `action` (a key or a click), then wait until the page has swapped in `screen`."""
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    old = wait_for(driver, "[data-screen]")
    action()
    WebDriverWait(driver, WAIT_S).until(ec.staleness_of(old))
    assert screen_name(driver) == screen, driver.find_element("id", "screen").text


def press(driver, *keys: str):
    from selenium.webdriver.common.action_chains import ActionChains

    def go() -> None:
        ActionChains(driver).send_keys(*keys).perform()

    return go


def click(driver, css: str):
    def go() -> None:
        driver.find_element("css selector", css).click()

    return go


def status(driver) -> str:
    return driver.find_element("id", "status-text").text


def sign_in(driver, base: str, name: str = "ana") -> None:
    from selenium.webdriver.common.keys import Keys

    driver.get(base + "/")
    assert screen_name(driver) == "signin"
    name_field = driver.find_element("id", "name")
    assert driver.switch_to.active_element == name_field  # the cursor is in the name field
    then(driver, lambda: name_field.send_keys(name, Keys.ENTER), "guidelines")
    then(driver, press(driver, Keys.ENTER), "item")  # Enter starts, as in the terminal


def training_by_key(driver, keys: tuple[str, ...]) -> None:
    from selenium.webdriver.common.keys import Keys

    assert "Training" in status(driver)
    then(driver, press(driver, *keys), "feedback")
    verdict = driver.find_element("id", "verdict").text
    assert verdict.startswith(("✓ Right", "✗ Wrong"))
    assert "Right answer" in driver.find_element("id", "answers").text or "right:" in (
        driver.find_element("id", "answers").text
    )
    assert "So far: " in driver.find_element("id", "accuracy").text
    then(driver, press(driver, Keys.ENTER), "item")
    assert "Test" in status(driver)


def no_foreign_request(driver, base: str) -> None:
    # The browser's own pages (chrome:// and, for its new tab's parts, chrome-untrusted://)
    # and data: URLs (inline bytes) reach no network; every other request counts.
    own = ("chrome:", "chrome-untrusted:", "about:", "data:")
    urls = [u for u in requested_urls(driver) if not u.startswith(own)]
    assert urls, "the performance log recorded no request"
    foreign = [u for u in urls if not u.startswith(base + "/")]
    assert not foreign, foreign


KEYS = {
    # layout: (training keys, test-by-key keys, css of what to click for the other test item)
    "pair": (("1",), ("2",), "button.option[data-keys='1']"),
    "choice": (("1",), ("2",), "button.option[data-keys='1']"),
    "multi_answer": (("1", "2", "1", "\ue007"), ("2", "2", "1", "\ue007"), None),
    "entity_choice": (("1",), ("2",), "button.entity[data-number='1']"),
    "scale": (("4",), ("0",), "button.option[data-keys='5']"),
}


@pytest.mark.parametrize("layout", list(KEYS))
def test_training_and_test_by_key_and_by_click(workspace, tmp_path: Path, layout: str):
    study = layout_study(workspace.engine, tmp_path, layout)
    add_annotator(workspace.engine, "ana")
    train_keys, test_keys, click_css = KEYS[layout]
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        training_by_key(d, train_keys)
        then(d, press(d, *test_keys), "item")  # the first test item, by key
        if click_css is None:  # MultiRC: tap each judgement, then Submit
            for n in (1, 2, 3):
                d.find_element("css selector", f"input[name='j{n}'][value='1']").click()
            then(d, click(d, "#submit"), "finished")
        else:
            then(d, click(d, click_css), "finished")
        no_foreign_request(d, base)
    stored = labels(workspace.engine, study)
    assert [label.phase for label in stored] == ["training", "test", "test"]
    assert all(label.shown_at <= label.answered_at for label in stored)
    values = [label.value for label in stored]
    expected = {
        "pair": ["entailment", "not_entailment", "entailment"],
        "choice": ["0", "1", "0"],
        "entity_choice": ["Oren Vale", "Lakeport", "Oren Vale"],
        "scale": [4.0, 0.0, 5.0],
    }
    if layout == "multi_answer":
        assert [sorted(v.values()) for v in values] == [
            ["0", "1", "1"],
            ["0", "0", "1"],
            ["1", "1", "1"],
        ]
    else:
        assert values == expected[layout]


def test_flag_reload_and_revise_on_the_pair_layout(workspace, tmp_path: Path):
    """A flag with a comment goes with the answer; the focus follows the new item; `?` opens
    the help and Escape closes it; a reload mid-test shows the same item again; `u` goes back
    to the previous test answer and changes it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, "pair", test=3)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        training_by_key(d, ("1",))
        first = d.find_element("id", "field-premise").text
        d.find_element("tag name", "body").send_keys("f")  # opens the flag box, cursor inside
        comment = d.switch_to.active_element
        assert comment.get_attribute("id") == "comment"
        comment.send_keys("<b>odd</b> item", Keys.ESCAPE)  # Escape leaves the comment box
        then(d, press(d, "2"), "item")
        focused = "return document.getElementById('screen').contains(document.activeElement)"
        assert d.execute_script(focused)  # the focus is on the new item, never lost
        d.find_element("tag name", "body").send_keys("?")  # help: the keys and guidelines
        help_dialog = d.find_element("id", "help-dialog")
        assert help_dialog.get_attribute("open") is not None
        assert "Answer keys" in help_dialog.text
        ActionChains(d).send_keys(Keys.ESCAPE).perform()
        assert help_dialog.get_attribute("open") is None
        second = d.find_element("id", "field-premise").text
        assert second != first and status(d).startswith("Test 1/3")
        d.refresh()  # reload mid-test: the same item, the same count
        assert screen_name(d) == "item"
        assert d.find_element("id", "field-premise").text == second
        assert status(d).startswith("Test 1/3")
        then(d, press(d, "u"), "item")  # back to the previous answer
        assert "Revising your previous answer" in d.find_element("id", "revise-banner").text
        assert d.find_element("id", "field-premise").text == first
        then(d, press(d, "1"), "item")
        assert "Previous answer changed to" in d.find_element("id", "notice").text
        assert d.find_element("id", "field-premise").text == second
        then(d, press(d, "1"), "item")
        then(d, press(d, "1"), "finished")
        no_foreign_request(d, base)
    stored = [label for label in labels(workspace.engine, study) if label.phase == "test"]
    assert [(label.flag, label.comment) for label in stored] == [
        (True, "<b>odd</b> item"),
        (False, None),
        (False, None),
    ]
    assert stored[0].value == "entailment" and stored[0].revisions == 1


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_answer_controls_are_in_view_without_scrolling(workspace, tmp_path: Path, size):
    """Every layout, phone and desktop: the answer controls and the text being judged are
    inside the viewport as the item appears (long passages scroll in their own box), STS-B's
    six answers below long sentences too, on its first test item as well (a notice above)."""
    from selenium.webdriver.common.keys import Keys

    width, height = size
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    add_annotator(workspace.engine, "ana")
    for layout in [*KEYS, "long_pair", "long_scale"]:
        study = layout_study(workspace.engine, tmp_path, layout)
        with (
            serve(workspace.engine, study, require_tokens=False) as base,
            chromium(tmp_path, width, height) as d,
        ):
            sign_in(d, base)
            d.save_screenshot(str(folder / f"{layout}-{width}x{height}.png"))
            assert out_of_view(d) == [], (layout, out_of_view(d))
            assert d.execute_script("return document.documentElement.scrollWidth") <= width
            if layout == "long_scale":  # the first test item: a notice above it takes room
                then(d, press(d, "4"), "feedback")
                then(d, press(d, Keys.ENTER), "item")
                assert "no feedback" in d.find_element("css selector", ".notice").text
                assert out_of_view(d) == [], (layout, "test", out_of_view(d))


def out_of_view(driver) -> list[str]:
    """The answer controls and the text being judged that are not wholly in the viewport."""
    return driver.execute_script(
        """
        const h = window.innerHeight, w = window.innerWidth;
        const controls = document.querySelectorAll(
          '.option, .entity, .candidate input, #submit, #pinned, .body');
        return Array.from(controls).filter(e => {
          const r = e.getBoundingClientRect();
          return r.bottom > h || r.right > w || r.top < 0;
        }).map(e => e.className || e.id);
        """
    )


def test_continue_shows_the_next_training_item_with_no_request_and_times_it_from_then(
    workspace, tmp_path: Path
):
    """The next training item comes with the feedback: Enter on the feedback shows it at once,
    with no request to the server, and its answer time starts when it was shown, not when
    the feedback was (the feedback's reading is not the item's)."""
    import time

    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, "pair", training=3)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        requested_urls(d)  # what was asked so far: the next look shows only what follows
        time.sleep(1.5)  # the annotator reads the feedback (not a wait for the page)
        then(d, press(d, Keys.ENTER), "item")
        assert "Training 1/3" in status(d)
        assert not [u for u in requested_urls(d) if u.startswith(base + "/")]
        then(d, press(d, "2"), "feedback")  # the ready item's answer goes to the server
        then(d, press(d, Keys.ENTER), "item")
        assert "Training 2/3" in status(d)
        no_foreign_request(d, base)
    first, second = labels(workspace.engine, study)
    assert (first.phase, second.phase) == ("training", "training")
    assert first.item_id != second.item_id and second.value == "not_entailment"
    assert second.shown_at - first.answered_at >= timedelta(seconds=1.4)
    assert timedelta(0) < second.answered_at - second.shown_at < timedelta(seconds=1.4)


def test_an_item_held_by_a_window_left_open_is_waited_for_then_shown(workspace, tmp_path: Path):
    """The last test item is on bo's screen (bo's window closed without quitting: the hold
    lasts): ana's page says it may come back, not "all done", checks by itself, and shows
    the item as soon as bo's hold is given back; then all done."""
    from annotate.protocol.session import AnnotatorSession

    study = layout_study(workspace.engine, tmp_path, "pair")
    bo = AnnotatorSession.open(workspace.engine, study, "bo", create_annotator=True)
    bo.submit(bo.next_item(), "entailment")  # bo's training item: admitted
    held = bo.next_item()
    add_annotator(workspace.engine, "ana")
    options = {"require_tokens": False, "poll_seconds": 1}
    with serve(workspace.engine, study, **options) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        training_by_key(d, ("1",))
        then(d, press(d, "1"), "held")
        text = d.find_element("id", "screen").text
        assert "No item for you right now" in text and "All done" not in text
        assert "1 item you have not labelled is on another annotator’s screen" in text
        # as the terminal app says it (wording.seconds), not "every 1.0 seconds"
        assert "This page checks by itself every 1 second. You can also leave" in text
        bo.release()  # bo's hold given back: the page polls and shows the item by itself
        wait_for(d, "[data-screen='item']")
        then(d, press(d, "1"), "finished")
    stored = labels(workspace.engine, study)
    ana = [label for label in stored if label.annotator_id != stored[0].annotator_id]
    assert [(label.phase, label.item_id) for label in ana][-1] == ("test", held.item_id)
    assert [label.phase for label in ana] == ["training", "test", "test"]


def test_a_refusal_then_an_admission_by_hand_reach_the_open_page(workspace, tmp_path: Path):
    """A manual gate: the waiting page shows the refusal by itself, and the thank-you page
    left open shows the first test item by itself once the researcher admits by hand."""
    from selenium.webdriver.common.keys import Keys

    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "pair", gate_rule="manual")
    ctx = load_study(workspace.engine, study)
    add_annotator(workspace.engine, "ana")
    options = {"require_tokens": False, "poll_seconds": 1}
    with serve(workspace.engine, study, **options) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        then(d, press(d, Keys.ENTER), "waiting")
        # as the terminal app says it (wording.seconds), not "every 1.0 seconds"
        said = d.find_element("id", "screen").text
        assert "checks by itself every 1 second and moves on" in said, said
        gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
        wait_for(d, "[data-screen='rejected']")
        assert d.find_element("id", "help-button").text == "Help (?)"  # as in the terminal
        gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
        wait_for(d, "[data-screen='item']")
        assert "Test" in status(d)
        then(d, press(d, "1"), "item")
    assert [label.phase for label in labels(workspace.engine, study)] == ["training", "test"]


def test_the_finished_screen_offers_the_help_the_terminal_offers(workspace, tmp_path: Path):
    """The terminal's "All done" screen offers `? Help` (the keys and the guidelines); the
    page's finished screen had no Help button and `?` did nothing there."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    study = layout_study(workspace.engine, tmp_path, "pair", test=1)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        training_by_key(d, ("1",))
        then(d, press(d, "1"), "finished")
        assert "All done" in d.find_element("id", "screen").text
        assert d.find_element("id", "help-button").text == "Help (?)"
        press(d, "?")()
        help_dialog = d.find_element("id", "help-dialog")
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is not None)
        # All done's own keys: u changes the last answer; the answer keys are no longer listed
        assert "u  go back and change your last test answer" in help_dialog.text
        assert "Answer keys" not in help_dialog.text
        press(d, Keys.ESCAPE)()
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is None)
        click(d, "#help-button")()  # the button opens it too
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is not None)


def test_help_and_quit_work_on_the_training_feedback(workspace, tmp_path: Path):
    """On the terminal's feedback screen `?` opens the help and `q` leaves; on the page's
    feedback both did nothing until the annotator pressed Continue."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    study = layout_study(workspace.engine, tmp_path, "pair", test=1)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        assert d.find_element("id", "help-button").text == "Help (?)"
        press(d, "?")()
        help_dialog = d.find_element("id", "help-dialog")
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is not None)
        # the feedback's own keys, as the terminal's help lists them (not the item's answers)
        assert "Enter/Space  continue" in help_dialog.text
        assert "Answer keys" not in help_dialog.text and "flag the item" not in help_dialog.text
        press(d, Keys.ESCAPE)()
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is None)
        assert screen_name(d) == "feedback"  # Escape closed the help, not the feedback
        then(d, press(d, "q"), "left")
        assert "Open this page again later to continue" in d.find_element("id", "screen").text


def test_quitting_says_whether_there_is_anything_to_continue(workspace, tmp_path: Path):
    """After the gate refused her, ana pressed q on the thank-you screen and was told to open
    the page again later to continue, with nothing to continue; the goodbye now says what the
    terminal's says (closing.goodbye): nothing more to do unless the researcher admits her
    after all. bo, quitting mid-training, is still told how to continue."""
    from selenium.webdriver.common.keys import Keys

    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "pair", gate_rule="manual")
    ctx = load_study(workspace.engine, study)
    add_annotator(workspace.engine, "ana")
    add_annotator(workspace.engine, "bo")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        then(d, press(d, Keys.ENTER), "waiting")
        gate.decide_manually(workspace.engine, ctx, "ana", False, reason="too fast")
        then(d, d.refresh, "rejected")
        then(d, press(d, "q"), "left")
        said = d.find_element("id", "screen").text
        assert (
            "Your answers are saved. There is nothing more for you to do in this study unless "
            "the researcher admits you to its test items after all; if they tell you so, open "
            "this page again later to continue."
        ) in " ".join(said.split())
        assert "continue where you stopped" not in said, said
        d.delete_all_cookies()
        sign_in(d, base, "bo")
        then(d, press(d, "q"), "left")
        assert "Your answers are saved. Open this page again later to continue where you " in (
            d.find_element("id", "screen").text
        )


LEAVING = """var e = new Event("beforeunload", {cancelable: true});
window.dispatchEvent(e); return e.defaultPrevented;"""
"""Would the browser ask before leaving the page (a reload, Back, closing the tab)? Headless
Chromium under chromedriver answers its own question, so the page's answer is read."""


def test_leaving_with_a_flag_not_yet_sent_asks_first(workspace, tmp_path: Path):
    """A flag and its comment go with the answer; Quit asked before dropping them, but a
    reload (or Back, or closing the tab) dropped them without a word. The page now asks
    first; once the answer has taken them, it no longer does."""
    study = layout_study(workspace.engine, tmp_path, "pair", test=3)
    add_annotator(workspace.engine, "ana")
    with serve(workspace.engine, study, require_tokens=False) as base, chromium(tmp_path) as d:
        sign_in(d, base)
        training_by_key(d, ("1",))  # an answer posted by htmx is no leaving
        assert d.execute_script(LEAVING) is False
        press(d, "f")()
        press(d, "the hypothesis has a typo")()
        assert d.execute_script(LEAVING) is True
        press(d, "\ue00c")()  # Escape leaves the comment box, then
        then(d, press(d, "2"), "item")  # the answer takes the flag and its comment
        assert d.execute_script(LEAVING) is False
    assert [(label.flag, label.comment) for label in labels(workspace.engine, study)][1:] == [
        (True, "the hypothesis has a typo")
    ]


BESIDE = """
const box = document.getElementById("flag-box").getBoundingClientRect();
const range = document.createRange();
range.selectNodeContents(document.getElementById("flag-box").parentElement.lastChild);
const words = range.getBoundingClientRect();
return {box: [box.left, box.right, box.top, box.bottom],
        words: [words.left, words.right, words.top, words.bottom]};
"""
"""Where the flag's tick box and its words ("Flag this item") are drawn."""


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_the_flag_s_tick_box_sits_beside_its_words(workspace, tmp_path: Path, size):
    """The open flag shows its tick box on the line of "Flag this item", just before the
    words, not alone in the middle of a line of its own with the words below."""
    study = layout_study(workspace.engine, tmp_path, "pair")
    add_annotator(workspace.engine, "ana")
    with (
        serve(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, *size) as d,
    ):
        sign_in(d, base)
        d.find_element("css selector", "#flag summary").click()
        where = d.execute_script(BESIDE)
        _, b_right, b_top, b_bottom = where["box"]
        w_left, _, w_top, w_bottom = where["words"]
        assert b_top < w_bottom and b_bottom > w_top, where  # one line
        assert b_right <= w_left < b_right + 20, where  # the words just after the box


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_the_help_opens_at_its_start_the_keys_in_view(workspace, tmp_path: Path, size):
    """`?` opens the help at its start, its "Keys" heading in view, not scrolled to its end
    (to "Close", which had the focus); Tab reaches "Close" and Escape closes it."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    study = layout_study(workspace.engine, tmp_path, "multi_answer")
    add_annotator(workspace.engine, "ana")
    where = """
    const dialog = document.getElementById("help-dialog");
    const box = dialog.getBoundingClientRect();
    const title = document.getElementById("help-title").getBoundingClientRect();
    return {scroll: dialog.scrollTop, tall: dialog.scrollHeight > dialog.clientHeight,
            seen: title.top >= box.top && title.bottom <= box.bottom};
    """
    with (
        serve(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, *size) as d,
    ):
        sign_in(d, base)
        help_dialog = d.find_element("id", "help-dialog")
        press(d, "?")()
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is not None)
        shown = d.execute_script(where)
        assert shown["tall"], "the help fits the window: the test shows nothing"
        assert shown["scroll"] == 0 and shown["seen"], shown
        press(d, Keys.TAB)()
        assert d.switch_to.active_element.get_attribute("id") == "help-close"
        press(d, Keys.ESCAPE)()
        WebDriverWait(d, WAIT_S).until(lambda _: help_dialog.get_attribute("open") is None)


KEY_BESIDE_TEXT = """
const pre = arguments[0], key = arguments[1], text = arguments[2];
const node = pre.firstChild, at = node.data.indexOf(" " + key + "  " + text);
if (at < 0) return null;
const range = document.createRange();
range.setStart(node, at + 1); range.setEnd(node, at + 2);
const k = range.getBoundingClientRect().top;
const from = at + 3 + key.length;
range.setStart(node, from); range.setEnd(node, from + 1);
return [k, range.getBoundingClientRect().top];
"""
"""The drawn tops of an option's key and of its text's first letter, in the keys list."""


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_each_key_is_listed_on_the_line_of_its_answer(workspace, tmp_path: Path, size):
    """The keys list (on the guidelines, and in the help) shows each of CB's seven points on
    the line of its key at a phone's width: not "… 2" at the end of one line and "Probably
    true" at the start of the next."""
    from selenium.webdriver.common.keys import Keys

    from annotate import specs
    from tests.tui.support import build_study

    rows = [
        {"premise": "Ana said the ferry had left.", "hypothesis": "The ferry left.",
         "label": "entailment", "idx": i}
        for i in range(2)
    ]  # fmt: skip
    study = build_study(
        workspace.engine, tmp_path, "superglue/cb", dev=rows[:1], test=rows[1:],
        overrides={"training_items": 1, "gate_min_items": 1, "gate_threshold": 0.0},
    )  # fmt: skip
    add_annotator(workspace.engine, "ana")
    options = specs.load_task("superglue/cb").answer_options()
    with (
        serve(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, *size) as d,
    ):
        d.get(base + "/")
        then(d, lambda: d.find_element("id", "name").send_keys("ana", Keys.ENTER), "guidelines")
        pre = d.find_element("css selector", "pre.keys")
        for option in options:
            tops = d.execute_script(KEY_BESIDE_TEXT, pre, option.key, option.text)
            assert tops is not None and tops[0] == tops[1], (option.key, option.text, tops)
