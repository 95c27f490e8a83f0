"""Crowd studies in real Chromium, behind https addresses stood in for on the loopback (a
host-resolver rule sends the public name to the local port, so the page's origin is the public
one, as behind a proxy): MTurk frames the page on its worker site and takes the exit form at
externalSubmit; a study not on MTurk refuses both; the Prolific recipe's public address
(`study crowd --url`) gets every worker past consent; an old tab shows that the worker went on
in another; a worker the gate did not admit leaves study B's link at once with its code."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from annotate.protocol.session import Phase
from tests.crowd_helpers import CODES, STUDY_A, STUDY_B, arrive, crowd_study, prolific_query, train
from tests.web.stand_ins import certificate, mturk_stand_in, resolver_switches
from tests.web.support import chromium, need_chromium, served_page
from tests.web.test_page_browser import WAIT_S, click, screen_name, then, wait_for

pytestmark = pytest.mark.slow

PUBLIC = "annotate.example.org"
"""The recipe's address (`study crowd --url https://annotate.example.org/`)."""
MTURK_NAMES = ["worker.mturk.com", "www.mturk.com", "workersandbox.mturk.com"]
PLATFORM = "app.prolific.com"
"""The platform's own site, where a worker clicks the study link (stood in for)."""
ASSIGNMENT = "3ABCDEF1234567"
MTURK_LINK = {
    "workerId": "A1B2C3D4E5F6",
    "assignmentId": ASSIGNMENT,
    "hitId": "3HITHIT1234567",
    "turkSubmitTo": "https://www.mturk.com",
}


@pytest.fixture(autouse=True)
def _chromium():
    need_chromium()


@pytest.fixture
def tls(tmp_path: Path) -> tuple[Path, Path]:
    return certificate(tmp_path, [PUBLIC, *MTURK_NAMES, PLATFORM])


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


def wait_until(driver, condition) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_S).until(lambda d: condition(d))


def work_through(driver) -> None:
    """From the guidelines to the exit: one training item (feedback read), the test items."""
    then(driver, click(driver, "#start"), "item")
    for _ in range(10):
        if screen_name(driver) == "feedback":
            then(driver, click(driver, "#continue"), "item")
            continue
        old = wait_for(driver, "[data-screen]")
        click(driver, "button.option[data-keys='1']")()
        wait_until(driver, lambda d, shown=old: _stale(shown))
        if screen_name(driver) == "exit":
            return
    raise AssertionError("the page never reached the exit")


def _stale(element) -> bool:
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    return False


def _mturk_study(workspace, tmp_path: Path) -> str:
    """A small MTurk study served behind https at PUBLIC: one training item, two test items."""
    return crowd_study(
        workspace.engine,
        tmp_path,
        train=1,
        test=2,
        gate_threshold=0.0,
        annotators_per_item=1,
        crowd_settings={"platform": "mturk", "study_ids": [], "public_url": f"https://{PUBLIC}/"},
    ).study.name


def test_mturk_frames_the_page_and_the_exit_form_reaches_external_submit(
    workspace, tmp_path: Path, tls
):
    study = _mturk_study(workspace, tmp_path)
    with mturk_stand_in(tls) as mturk, served_page(workspace.engine, study, tls=tls) as base:
        ports = {PUBLIC: port_of(base), **dict.fromkeys(MTURK_NAMES, mturk.port)}
        with chromium(tmp_path, extra=resolver_switches(ports)) as driver:
            task = f"https://{PUBLIC}/?{urlencode(MTURK_LINK)}"
            driver.get("https://worker.mturk.com/hit?" + urlencode({"src": task}))
            driver.switch_to.frame("task")
            assert screen_name(driver) == "guidelines"  # drawn inside MTurk's frame
            work_through(driver)
            assert driver.find_element("id", "code").text == CODES["completed"]
            driver.find_element("css selector", "#mturk-submit button").click()
            assert mturk.arrived.wait(WAIT_S), "externalSubmit received nothing"
    assert mturk.submitted == [
        {"assignmentId": ASSIGNMENT, "outcome": "completed", "code": CODES["completed"]}
    ]
    # As from any task page: the page's origin (not "null"), and no path or query (the
    # worker's ids) in the Referer.
    assert mturk.sent_from == [(f"https://{PUBLIC}", f"https://{PUBLIC}/")]


def test_mturk_s_framed_preview_then_the_accepted_assignment_reach_external_submit(
    workspace, tmp_path: Path, tls
):
    """As a worker meets a HIT: its preview in MTurk's frame (nothing to answer, no work
    begun), then, accepted, the same frame opened with the assignment, through to the exit."""
    study = _mturk_study(workspace, tmp_path)
    preview = {**MTURK_LINK, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"}
    preview.pop("workerId")  # MTurk's preview names no worker
    with mturk_stand_in(tls) as mturk, served_page(workspace.engine, study, tls=tls) as base:
        ports = {PUBLIC: port_of(base), **dict.fromkeys(MTURK_NAMES, mturk.port)}
        with chromium(tmp_path, extra=resolver_switches(ports)) as driver:
            for link, first in ((preview, "preview"), (MTURK_LINK, "guidelines")):
                task = f"https://{PUBLIC}/?{urlencode(link)}"
                driver.get("https://worker.mturk.com/hit?" + urlencode({"src": task}))
                driver.switch_to.frame("task")
                assert screen_name(driver) == first
                if first == "preview":
                    assert "accept the task" in driver.find_element("id", "screen").text
                    assert not driver.find_elements("css selector", "#start, button.option")
            work_through(driver)
            driver.find_element("css selector", "#mturk-submit button").click()
            assert mturk.arrived.wait(WAIT_S), "externalSubmit received nothing"
    assert mturk.submitted == [
        {"assignmentId": ASSIGNMENT, "outcome": "completed", "code": CODES["completed"]}
    ]


def test_a_study_not_on_mturk_refuses_frames_and_foreign_form_targets(
    workspace, tmp_path: Path, tls
):
    study = crowd_study(workspace.engine, tmp_path, train=1, test=2).study.name
    with mturk_stand_in(tls) as mturk, served_page(workspace.engine, study, tls=tls) as base:
        ports = {PUBLIC: port_of(base), **dict.fromkeys(MTURK_NAMES, mturk.port)}
        with chromium(tmp_path, extra=resolver_switches(ports)) as driver:
            link = f"https://{PUBLIC}/?{urlencode(prolific_query(1))}"
            # Framed by another site: Chromium draws nothing of the page in the frame.
            driver.get("https://worker.mturk.com/hit?" + urlencode({"src": link}))
            wait_until(driver, lambda d: d.title == "framed")
            driver.switch_to.frame("task")
            assert driver.find_elements("css selector", "[data-screen]") == []
            driver.switch_to.default_content()
            # Opened on its own, it works; a form aimed elsewhere is stopped by the browser.
            driver.get(link)
            assert screen_name(driver) == "guidelines"
            driver.execute_script(
                """
                document.addEventListener("securitypolicyviolation",
                    e => { document.title = "refused " + e.effectiveDirective; });
                const form = document.createElement("form");
                form.method = "post";
                form.action = "https://www.mturk.com/mturk/externalSubmit";
                form.innerHTML = '<input name="assignmentId" value="x">';
                document.body.appendChild(form);
                form.submit();
                """
            )
            wait_until(driver, lambda d: d.title == "refused form-action")
    assert mturk.submitted == []


RECIPE_TOML = f'''platform = "prolific"
training_study_id = "{STUDY_A}"
test_study_id = "{STUDY_B}"
consent = """
This study is run by a test lab. Your answers are stored under a pseudonym.
"""
'''


def recipe_study(workspace, cli, tmp_path: Path, **overrides) -> str:
    """The recipe's study: crowd settings from its TOML, and its public address given to
    `study crowd --url` (nothing given to the server: it takes the stored one)."""
    study = crowd_study(workspace.engine, tmp_path, train=1, test=4, **overrides).study.name
    (tmp_path / "crowd.toml").write_text(RECIPE_TOML + "[codes]\n" + "".join(
        f'{outcome} = "{code}"\n' for outcome, code in CODES.items()
    ))  # fmt: skip
    done = cli("study", "crowd", study, "--config", tmp_path / "crowd.toml")
    assert done.code == 0, done.stderr
    done = cli("study", "crowd", study, "--url", f"https://{PUBLIC}/")
    assert done.code == 0, done.stderr
    assert f"https://{PUBLIC}/?PROLIFIC_PID=" in done.stdout
    return study


def link(n: int, platform_study: str = STUDY_A) -> str:
    return f"https://{PUBLIC}/?{urlencode(prolific_query(n, platform_study))}"


def test_the_recipe_behind_https_gets_every_worker_past_consent(
    workspace, cli, tmp_path: Path, tls
):
    study = recipe_study(workspace, cli, tmp_path, gate_threshold=0.0)
    with (
        served_page(workspace.engine, study, tls=tls) as base,
        chromium(tmp_path, extra=resolver_switches({PUBLIC: port_of(base)})) as driver,
    ):
        for n in range(1, 6):
            driver.delete_all_cookies()  # the next worker: a browser of their own
            driver.get(link(n))
            assert screen_name(driver) == "consent"
            then(driver, click(driver, "#agree"), "guidelines")
            assert driver.current_url == f"https://{PUBLIC}/"


def test_a_worker_who_clicks_the_link_on_the_platforms_site_gets_in(
    workspace, cli, tmp_path: Path, tls
):
    # As on Prolific: the link is clicked on the platform's own site, so the navigation (the
    # arrival, then its redirect to "/") began on another site than the page's.
    study = recipe_study(workspace, cli, tmp_path, gate_threshold=0.0)
    with (
        mturk_stand_in(tls) as platform,
        served_page(workspace.engine, study, tls=tls) as base,
        chromium(
            tmp_path,
            extra=resolver_switches({PUBLIC: port_of(base), PLATFORM: platform.port}),
        ) as driver,
    ):
        for n in (1, 2):
            driver.delete_all_cookies()
            driver.get(f"https://{PLATFORM}/link?" + urlencode({"href": link(n)}))
            click(driver, "#go")()
            assert screen_name(driver) == "consent"
            then(driver, click(driver, "#agree"), "guidelines")
            then(driver, click(driver, "#start"), "item")
        # Back on the platform's page, the same worker clicks the link again: where they were.
        driver.get(f"https://{PLATFORM}/link?" + urlencode({"href": link(2)}))
        click(driver, "#go")()
        assert screen_name(driver) == "guidelines"


def test_an_old_tab_shows_the_worker_continued_in_another(workspace, cli, tmp_path: Path, tls):
    study = recipe_study(workspace, cli, tmp_path, gate_threshold=0.0)
    with (
        served_page(workspace.engine, study, tls=tls) as base,
        chromium(tmp_path, extra=resolver_switches({PUBLIC: port_of(base)})) as driver,
    ):
        driver.get(link(1))
        then(driver, click(driver, "#agree"), "guidelines")
        then(driver, click(driver, "#start"), "item")
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(link(1))  # the same worker opens the link again
        assert screen_name(driver) in ("guidelines", "item")
        driver.switch_to.window(first)
        then(driver, click(driver, "button.option[data-keys='1']"), "continued")
        # Back here: the other tab's arrival began the browser's session anew, so the
        # guidelines come first again, then the item.
        then(driver, click(driver, "#reclaim"), "guidelines")
        then(driver, click(driver, "#start"), "item")


def test_a_worker_not_admitted_leaves_study_b_at_once_with_the_code(
    workspace, cli, tmp_path: Path, tls
):
    study = recipe_study(workspace, cli, tmp_path, gate_threshold=1.0)
    careless = arrive(workspace.engine, study, 1, STUDY_A)
    train(workspace.engine, careless, right=False)
    assert careless.phase() is Phase.REJECTED
    with (
        served_page(workspace.engine, study, tls=tls) as base,
        chromium(tmp_path, extra=resolver_switches({PUBLIC: port_of(base)})) as driver,
    ):
        # Rejected by the gate, then on B's link; then someone who never took A.
        for n, platform_study, outcome in (
            (1, STUDY_B, "not_admitted"),
            (2, STUDY_B, "not_admitted"),
            (1, STUDY_A, "screened_out"),
        ):
            driver.delete_all_cookies()
            driver.get(link(n, platform_study))
            assert screen_name(driver) == "exit"  # no consent, guidelines or training
            assert driver.find_element("id", "code").text == CODES[outcome]
            back = driver.find_element("id", "return").get_attribute("href")
            assert back == f"https://app.prolific.com/submissions/complete?cc={CODES[outcome]}"
