"""The annotator page under test: studies of several layouts, the page served by uvicorn in a
thread of the test process (loopback, a free port), and headless Chromium driving it."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate.protocol.studies import load_study
from annotate.store.models import Label
from tests.tui.support import build_study

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ONE_TRAINING = {
    "training_items": 1,
    "gate_min_items": 1,
    "gate_threshold": 0.0,
    "test_sample": "all",
    "annotators_per_item": 1,
}
"""One training item (with feedback), a gate everyone passes, then every test item."""


# --- items of each layout (our own text, no benchmark data) ------------------------------------
LONG = " ".join(["The harbour master logs every boat that comes in before noon."] * 60)
"""A premise or passage far longer than a phone's screen (the page scrolls it in its own box)."""


def rte_rows(n: int, start: int = 0, *, long: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "premise": (LONG + " " if long else "") + f"The ferry to island {i} leaves at noon.",
            "hypothesis": f"A ferry goes to island {i}.",
            "label": "entailment" if i % 2 == 0 else "not_entailment",
            "idx": start + i,
        }
        for i in range(n)
    ]


def copa_rows(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "premise": f"The kettle number {i} whistled.",
            "choice1": "The water was boiling.",
            "choice2": "The kettle was empty.",
            "question": "cause" if i % 2 == 0 else "effect",
            "label": 0,
            "idx": start + i,
        }
        for i in range(n)
    ]


def multirc_rows(n: int, start: int = 0, *, long: bool = False) -> list[dict[str, Any]]:
    questions = [
        {
            "question": f"What did Mira plant in bed {q}?",
            "idx": q,
            "answers": [
                {"text": "Carrots", "idx": 10 * q, "label": 1},
                {"text": "Roses", "idx": 10 * q + 1, "label": 0},
                {"text": "Root vegetables", "idx": 10 * q + 2, "label": 1},
            ],
        }
        for q in range(n)
    ]
    text = "Mira planted carrots in every bed of her garden, and no flowers at all."
    text = (LONG + " " if long else "") + text
    return [{"idx": start, "version": 1.1, "passage": {"text": text, "questions": questions}}]


def record_rows(n: int, start: int = 0, *, long: bool = False) -> list[dict[str, Any]]:
    text = "Oren Vale thanked Lakeport after the Lakeport Rowers won."
    text += (" " + LONG if long else "") + "\n@highlight\nRowers win"
    return [
        {
            "source": "Test",
            "passage": {
                "text": text,
                "entities": [{"start": 0, "end": 8}, {"start": 18, "end": 25}],
            },
            "qas": [
                {
                    "query": f"@placeholder praised the crew in race {i}.",
                    "idx": start + i,
                    "answers": [{"start": 0, "end": 8, "text": "Oren Vale"}],
                }
            ],
            "idx": start + i,
        }
        for i in range(n)
    ]


def stsb_tsv(n: int, start: int = 0, *, long: bool = False) -> str:
    """STS-B's TSV; `long`: each sentence some 250 characters, a long one of the task's own
    (not a passage: both sentences scroll in the item's box)."""
    more = " " + " ".join([LONG.split(". ")[0] + "."] * 4) if long else ""
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n"
    )
    rows = [
        f"{start + i}\tmain\tx\t2012\t{i:04d}\tnone\tnone\tA cat sleeps on mat {i}.{more}\t"
        f"A cat is asleep on mat {i}.{more}\t4.000\n"
        for i in range(n)
    ]
    return header + "".join(rows)


def without_gold(rows: Any, task: str) -> Any:
    if isinstance(rows, str):  # STS-B's TSV: the test file has no score column
        lines = rows.splitlines()
        return "\n".join("\t".join(line.split("\t")[:-1]) for line in lines) + "\n"
    out = json.loads(json.dumps(rows))
    for row in out:
        row.pop("label", None)
        for q in row.get("passage", {}).get("questions", []):
            for a in q["answers"]:
                a.pop("label", None)
        for q in row.get("qas", []):
            q.pop("answers", None)
    return out


LAYOUTS = {
    "pair": ("superglue/rte", rte_rows),
    "long_pair": ("superglue/rte", lambda n, start=0: rte_rows(n, start, long=True)),
    "choice": ("superglue/copa", copa_rows),
    "multi_answer": ("superglue/multirc", multirc_rows),
    "long_multi_answer": (
        "superglue/multirc",
        lambda n, start=0: multirc_rows(n, start, long=True),
    ),
    "entity_choice": ("superglue/record", record_rows),
    "long_entity_choice": (
        "superglue/record",
        lambda n, start=0: record_rows(n, start, long=True),
    ),
    "scale": ("glue/stsb", stsb_tsv),
    "long_scale": ("glue/stsb", lambda n, start=0: stsb_tsv(n, start, long=True)),
}


def layout_study(
    engine: Engine, folder: Path, layout: str, *, test: int = 2, training: int = 1, **overrides
) -> str:
    """A study of `layout` with `training` training items (one by default) and `test` test
    items."""
    task, rows = LAYOUTS[layout]
    return build_study(
        engine,
        folder / layout,
        task,
        dev=rows(training),
        test=without_gold(rows(test, 100), task),
        overrides={
            **ONE_TRAINING,
            "training_items": training,
            "gate_min_items": training,
            **overrides,
        },
        name=layout.replace("_", "-"),
    )


def labels(engine: Engine, study: str) -> list[Label]:
    ctx = load_study(engine, study)
    with Session(engine) as s:
        return list(
            s.scalars(select(Label).where(Label.study_id == ctx.id).order_by(Label.id)).all()
        )


# --- the server ---------------------------------------------------------------------------------
@contextmanager
def served_page(
    engine: Engine, study: str, *, tls: tuple[Path, Path] | None = None, **options: Any
) -> Iterator[str]:
    """The page on a free loopback port in a thread of this process; its base URL. `tls`:
    a certificate and its key, served over https (a stand-in for the proxy in front)."""
    import socket

    import uvicorn

    from annotate.web.page.serve import page_app
    from annotate.web.page.supervisor import uvicorn_options

    # The origin check needs the port before the app exists: bind the socket first, and
    # listen at once, so requests queue until uvicorn accepts them (no polling for it).
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = page_app(engine, study, host="127.0.0.1", port=port, **options)
    # `serve`'s own options (its HTTP parser and bounds), quieter and with no lifespan.
    options = {**uvicorn_options("127.0.0.1", port), "log_level": "warning", "lifespan": "off"}
    if tls is not None:
        options.update(ssl_certfile=str(tls[0]), ssl_keyfile=str(tls[1]))
    config = uvicorn.Config(app, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# --- the browser -------------------------------------------------------------------------------
def need_chromium() -> None:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("needs Debian's chromium and chromium-driver (.ci/run installs them)")
    pytest.importorskip("selenium")


@contextmanager
def chromium(
    tmp_path: Path, width: int = 1280, height: int = 800, extra: tuple[str, ...] = ()
) -> Iterator[Any]:
    """Headless Chromium with a fresh profile and nothing of its own on the network; `extra`:
    more of its command-line switches."""
    need_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tmp_path / f"chromium-profile-{width}"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        *extra,
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        # The viewport itself at width x height (a window's own bars would take from it).
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def requested_urls(driver: Any) -> list[str]:
    """Every URL the page asked the network for (the DevTools performance log)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls
