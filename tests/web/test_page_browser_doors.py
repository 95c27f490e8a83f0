"""The page's doors in real headless Chromium: a full disk says so, and the page tries again by
itself until it can save again (issue 39, item 15b); a server out of reach is said, and the
answer is sent when pressed again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, event

from annotate.protocol.studies import add_annotator
from tests.web.support import chromium, labels, layout_study, need_chromium, served_page
from tests.web.test_page_browser import WAIT_S, click, press, screen_name, sign_in, then

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _chromium():
    need_chromium()


@contextmanager
def disk_full(engine: Engine) -> Iterator[None]:
    """Every write fails as SQLite fails on a full disk (SQLITE_FULL), until the block ends."""

    def refuse(conn, cursor, statement: str, *args) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorname = "SQLITE_FULL"  # type: ignore[attr-defined]
            error.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
            raise error

    event.listen(engine, "before_cursor_execute", refuse)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", refuse)


def test_a_full_disk_is_said_and_the_page_recovers_by_itself(workspace, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    engine = workspace.engine
    add_annotator(engine, "ana")
    study = layout_study(engine, tmp_path, "pair", test=2)
    with served_page(engine, study, require_tokens=False) as base, chromium(tmp_path) as driver:
        sign_in(driver, base)
        then(driver, press(driver, "1"), "feedback")  # a training answer, stored
        with disk_full(engine):
            driver.get(base + "/")  # a reload: the page must write (its window's activity)
            assert screen_name(driver) == "disk-full"
            said = driver.find_element("id", "screen").text
            assert "disk is full" in said and "tries again by itself" in said
        # Room again: with no click and no reload, the page shows what the reload asked for:
        # the first test item, which came with the feedback (as "continue" shows it).
        WebDriverWait(driver, WAIT_S).until(lambda d: screen_name(d) == "item")
        assert "Test" in driver.find_element("id", "status-text").text
    assert len(labels(engine, study)) == 1  # the answer stored before, and nothing else


def test_two_tabs_on_one_item_the_second_answer_is_refused_and_said(workspace, tmp_path):
    """One browser, two tabs on the same test item (issue 39, item 15c): the first tab's answer
    is stored; the second tab's different answer is refused, and its tab says so, in words
    true also of one tab whose answer's reply was lost."""
    from selenium.webdriver.common.keys import Keys

    engine = workspace.engine
    add_annotator(engine, "ana")
    study = layout_study(engine, tmp_path, "pair", test=3)
    with served_page(engine, study, require_tokens=False) as base, chromium(tmp_path) as driver:
        sign_in(driver, base)
        then(driver, press(driver, "1"), "feedback")
        then(driver, press(driver, Keys.ENTER), "item")  # the first test item
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(base + "/")  # the second tab: the same item
        assert screen_name(driver) == "item"
        second = driver.current_window_handle
        driver.switch_to.window(first)
        then(driver, press(driver, "1"), "item")  # stored: the first tab moves on
        driver.switch_to.window(second)
        then(driver, press(driver, "2"), "item")  # refused: the tab shows where things stand
        said = driver.find_element("id", "notice").text
        assert "already answered" in said and "was not stored" in said
        # not "in another tab" alone: a lost reply on this very screen is refused alike
        assert "sent earlier from this screen, or from another tab or window" in said
    test = [label for label in labels(engine, study) if label.phase == "test"]
    assert [label.value for label in test] == ["entailment"]


def test_an_answer_that_cannot_reach_the_server_is_said_and_sent_when_pressed_again(
    workspace, tmp_path
):
    """The server out of reach (stopped, restarting, the network cut) when a worker answers:
    the page says the answer was not sent, keeps the item, and the same key sends it later."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    engine = workspace.engine
    add_annotator(engine, "ana")
    study = layout_study(engine, tmp_path, "pair", test=2)
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    with served_page(engine, study, require_tokens=False) as base, chromium(tmp_path) as driver:
        sign_in(driver, base)
        then(driver, press(driver, "1"), "feedback")
        then(driver, press(driver, Keys.ENTER), "item")  # the first test item
        item = driver.find_element("id", "body").text
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
        press(driver, "2")()
        notice = WebDriverWait(driver, WAIT_S).until(lambda d: d.find_element("id", "notice"))
        assert "could not be reached" in notice.text and "not sent" in notice.text
        assert driver.find_element("id", "body").text == item  # the same item, still there
        assert [label.phase for label in labels(engine, study)] == ["training"]
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
        then(driver, press(driver, "2"), "item")  # back: the same key sends it
        assert "could not be reached" not in driver.find_element("id", "screen").text
    test = [label.value for label in labels(engine, study) if label.phase == "test"]
    assert test == ["not_entailment"]


def test_a_waiting_screen_that_cannot_reach_the_server_says_it_keeps_trying(workspace, tmp_path):
    """The waiting screen checks by itself: out of reach, it says it keeps trying (not that an
    answer was not sent, as no one pressed anything), and the words go once a check gets
    through."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    engine = workspace.engine
    add_annotator(engine, "ana")
    study = layout_study(engine, tmp_path, "pair", gate_rule="manual")
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    options = {"require_tokens": False, "poll_seconds": 0.3}
    with served_page(engine, study, **options) as base, chromium(tmp_path) as driver:
        sign_in(driver, base)
        then(driver, press(driver, "1"), "feedback")
        then(driver, press(driver, Keys.ENTER), "waiting")
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
        notice = WebDriverWait(driver, WAIT_S).until(lambda d: d.find_element("id", "notice"))
        assert notice.text == (
            "The server could not be reached just now: this page keeps trying by itself."
        )
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
        WebDriverWait(driver, WAIT_S).until(lambda d: not d.find_elements("id", "notice"))
        assert screen_name(driver) == "waiting"


def test_a_crowd_worker_whose_session_is_gone_is_sent_to_their_link_at_once(workspace, tmp_path):
    """A crowd worker's cookie lost mid-test (cleared, or the server restarted with a key of
    its own): their next answer is not taken, and the page says to open their link again,
    where a reload (the expired page's offer) would only have led."""
    from urllib.parse import urlencode

    from tests.crowd_helpers import prolific_query, short_study

    engine = workspace.engine
    study = short_study(engine, tmp_path).study.name
    with served_page(engine, study) as base, chromium(tmp_path) as driver:
        driver.get(f"{base}/?{urlencode(prolific_query(1))}")
        then(driver, click(driver, "#start"), "item")
        then(driver, press(driver, "1"), "feedback")
        driver.delete_all_cookies()
        then(driver, click(driver, "#continue"), "item")  # shown with no request
        then(driver, press(driver, "1"), "link")
        said = driver.find_element("id", "screen").text
        assert "nothing was saved" in said and "Open that link again" in said, said
        assert "Reload" not in said
    assert [label.phase for label in labels(engine, study)] == ["training"]


def test_back_after_an_answer_shows_the_current_item_not_the_answered_one(workspace, tmp_path):
    """One tab, no script (plain form posts): after a test answer, Back does not bring the
    answered item's form again to answer it otherwise: the page asks the server, which shows
    where the worker stands (the next item)."""

    def post(css: str, screen: str) -> None:  # a whole page each time: the old one goes first
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        old = driver.find_element("css selector", "[data-screen]")
        driver.find_element("css selector", css).click()
        WebDriverWait(driver, WAIT_S).until(ec.staleness_of(old))
        assert screen_name(driver) == screen, driver.find_element("id", "screen").text

    engine = workspace.engine
    add_annotator(engine, "ana")
    study = layout_study(engine, tmp_path, "pair", test=3)
    with served_page(engine, study, require_tokens=False) as base, chromium(tmp_path) as driver:
        driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
        driver.get(base + "/")
        driver.find_element("id", "name").send_keys("ana")
        post("form.signin [type=submit]", "guidelines")
        post("form.start [type=submit]", "item")
        post("button.option", "feedback")
        post("#continue", "item")  # the first test item
        first = driver.find_element("id", "body").text
        post("button.option", "item")  # stored: the next item
        following = driver.find_element("id", "body").text
        driver.back()
        assert screen_name(driver) == "item"
        assert driver.find_element("id", "body").text == following != first
    test = [label for label in labels(engine, study) if label.phase == "test"]
    assert [label.value for label in test] == ["entailment"]
