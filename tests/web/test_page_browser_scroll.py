"""Where the window stands when the page swaps in a new screen, in real headless Chromium: an
annotator who scrolled down a long MultiRC item to answer it sees the feedback from its top
(its verdict in view), and each next item from its top (the passage's start), not where the
screen before was scrolled to; the waiting screen's polls leave the reader where they are; PgUp
and PgDn scroll a long passage's box wherever the focus is."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate.protocol.studies import add_annotator
from tests.web.support import chromium, layout_study, need_chromium, served_page
from tests.web.test_page_browser import WAIT_S, press, screen_name, sign_in, status, then

pytestmark = pytest.mark.slow

WHERE = """
const part = document.querySelector(arguments[0]).getBoundingClientRect();
const body = document.getElementById("body");
return {top: part.top, bottom: part.bottom, height: window.innerHeight, y: window.scrollY,
        passage: body ? body.scrollTop : null};
"""
"""Where the element named by a CSS selector is in the viewport, the window's scroll and the
passage box's own scroll."""


@pytest.fixture(autouse=True)
def _chromium():
    need_chromium()


def settled(driver, css: str) -> None:
    """Wait until the focus is on `css`: page.js has done with the new screen."""
    from selenium.webdriver.support.ui import WebDriverWait

    focused = (
        "return document.activeElement !== null && document.activeElement.matches(arguments[0])"
    )
    WebDriverWait(driver, WAIT_S).until(lambda d: d.execute_script(focused, css))


def scroll_down(driver) -> int:
    """Scroll the window to the page's end, as an annotator does to reach the answer's
    controls in a small window; the scroll it got to."""
    driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    y = driver.execute_script("return window.scrollY")
    assert y > 0, "the page is not long enough to scroll: the test shows nothing"
    return y


def at_its_top(driver) -> None:
    """The item opens at its top: the window unscrolled, the passage's start in view."""
    where = driver.execute_script(WHERE, "#body")
    assert where["y"] == 0 and where["passage"] == 0, where
    assert 0 <= where["top"] < where["height"], where


@pytest.mark.parametrize("size", [(390, 600), (1280, 260)], ids=["phone", "low-window"])
def test_the_feedback_and_each_next_item_open_at_their_top(workspace, tmp_path: Path, size):
    """Scrolled down to answer a long MultiRC item, the annotator sees the feedback from its
    top, the verdict in view (in a window too low for both, from its verdict); "continue" and
    a test answer show the next item from its top, the first candidate keeping the focus."""
    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, "long_multi_answer")
    add_annotator(workspace.engine, "ana")
    first_candidate = ".candidate[data-row='1'] input"
    with (
        served_page(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, *size) as d,
    ):
        sign_in(d, base)
        settled(d, first_candidate)
        scroll_down(d)
        then(d, press(d, "1", "2", "1", Keys.ENTER), "feedback")
        settled(d, "#continue")  # the focus where it was: on "continue"
        where = d.execute_script(WHERE, "#verdict")
        assert where["top"] >= 0 and where["bottom"] <= where["height"], where
        assert where["y"] == 0 or abs(where["top"]) < 1, where  # its top, or its verdict's
        then(d, press(d, Keys.ENTER), "item")  # the ready test item, shown with no request
        assert "Test" in status(d)
        settled(d, first_candidate)
        at_its_top(d)
        scroll_down(d)
        then(d, press(d, "2", "2", "1", Keys.ENTER), "item")  # the next test item, asked for
        settled(d, first_candidate)
        at_its_top(d)


def test_a_poll_leaves_the_reader_where_they_are_and_a_new_screen_opens_at_its_top(
    workspace, tmp_path: Path
):
    """A phone's low window on the waiting screen, scrolled down to its end: its polls find
    nothing new and leave it as it is; the poll that brings the first test item shows it from
    its top."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    study = layout_study(workspace.engine, tmp_path, "long_pair", gate_rule="manual")
    add_annotator(workspace.engine, "ana")
    options = {"require_tokens": False, "poll_seconds": 0.2}
    with served_page(workspace.engine, study, **options) as base, chromium(tmp_path, 390, 300) as d:
        sign_in(d, base)
        then(d, press(d, "1"), "feedback")
        then(d, press(d, Keys.ENTER), "waiting")
        settled(d, "#recheck")
        y = scroll_down(d)
        count = "window.polls = 0; document.addEventListener('htmx:afterRequest', () => polls++)"
        d.execute_script(count)
        WebDriverWait(d, WAIT_S).until(lambda d: d.execute_script("return window.polls") >= 2)
        assert screen_name(d) == "waiting"
        assert d.execute_script("return window.scrollY") == y
        ctx = load_study(workspace.engine, study)
        gate.decide_manually(workspace.engine, ctx, "ana", True, reason="trained in person")
        shows = "return document.querySelector('[data-screen]').dataset.screen"
        WebDriverWait(d, WAIT_S).until(lambda d: d.execute_script(shows) == "item")
        settled(d, "#body")
        at_its_top(d)


@pytest.mark.parametrize("layout", ["long_multi_answer", "long_entity_choice", "long_pair"])
def test_page_down_and_up_scroll_the_long_passage_wherever_the_focus_is(
    workspace, tmp_path: Path, layout: str
):
    """The keys say PgUp/PgDn scroll a long passage: they scroll its box on the item whether
    the focus is on the passage (a pair), a MultiRC judgement or a ReCoRD entity, and on the
    feedback, whose focus is on "continue"; the focus stays where it was."""
    from selenium.webdriver.common.keys import Keys

    study = layout_study(workspace.engine, tmp_path, layout)
    add_annotator(workspace.engine, "ana")
    passage = "return document.getElementById('body').scrollTop"
    focus = {
        "long_multi_answer": ".candidate[data-row='1'] input",
        "long_entity_choice": ".entity[data-number='1']",
        "long_pair": "#body",
    }[layout]
    answer = {"long_multi_answer": ("1", "2", "1", Keys.ENTER)}.get(layout, ("1",))
    with (
        served_page(workspace.engine, study, require_tokens=False) as base,
        chromium(tmp_path, 1280, 800) as d,
    ):
        sign_in(d, base)
        for screen in ("item", "feedback"):
            settled(d, focus)
            assert d.execute_script(passage) == 0
            down = moved(d, Keys.PAGE_DOWN, 0, passage)
            assert down > 0, f"PgDn left the passage unscrolled on the {screen}"
            further = moved(d, Keys.PAGE_DOWN, down, passage)
            assert further > down
            assert moved(d, Keys.PAGE_UP, further, passage) < further
            settled(d, focus)  # the focus did not move
            if screen == "item":
                then(d, press(d, *answer), "feedback")
                focus = "#continue"


def moved(driver, key: str, before: float, script: str) -> float:
    """Press `key`, then wait until the passage's scroll leaves `before` (the browser's own
    scrolling glides there): where it settled, or `before` if it never moved."""
    import time

    press(driver, key)()
    deadline, last = time.monotonic() + 2, before
    while time.monotonic() < deadline:
        now = driver.execute_script(script)
        if now != before and now == last:
            return now
        last = now
        time.sleep(0.2)
    return last
