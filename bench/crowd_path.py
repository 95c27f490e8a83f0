"""The crowd's real path through the page, for bench_web: a Prolific study with consent,
guidelines, training with feedback, a threshold gate, a test batch, an exit survey and a
completion code; simulated workers that follow it request by request; and the same workers
on the bare page (bench/bare_page.py) as the baseline.

A worker's requests, as a browser sends them:
    GET /?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..  (303 to /: the consent screen)
    POST /consent agree=yes                            (the guidelines)
    POST /start                                        (the first training item)   = arrival
    POST /answer, GET /screen?next=1                   (feedback, next item)        = training
    POST /answer                                       (next test item)             = test
    POST /survey                                       (the code)                   = exit
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import Engine, insert

PHASES = ("arrival", "training", "test", "exit")
PROLIFIC_STUDY = "c0ffee" + "0" * 18
SCREEN = re.compile(r'data-screen="([a-z]+)"')
PHASE = re.compile(r'data-phase="([a-z]+)"')
TICKET = re.compile(r'name="ticket" value="([^"]+)"')
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
HIDDEN = re.compile(r'type="hidden" name="([a-z])" value="([^"]*)"')
READY = re.compile(r'<template id="upcoming">(.*?)</template>', re.S)
"""The next training item, sent with the feedback: the page's script shows it on "continue"."""
ANSWERS = ("entailment", "not_entailment")


def build_crowd_store(
    path: str, *, test_items: int, training_items: int, batch: int, k: int, name: str = "crowd"
) -> Engine:
    """A crowd study made the way a researcher makes one (create_study with crowd settings),
    on synthetic RTE items: a labelled dev set for training, a test set."""
    from annotate.protocol.crowd_config import CrowdConfig, SurveyQuestion, with_codes
    from annotate.protocol.studies import create_study
    from annotate.store.models import Dataset, Item, utcnow
    from annotate.workspace import open_workspace

    engine = open_workspace(path, create=True).engine
    ids = {}
    with engine.begin() as conn:
        for split, n in (("dev", training_items), ("test", test_items)):
            ids[split] = conn.execute(
                insert(Dataset).values(
                    task="superglue/rte",
                    split=split,
                    path=f"bench-{split}",
                    sha256=f"bench-{name}-{split}",
                    n_items=n,
                    detail={"labelled": 1},
                    imported_at=utcnow(),
                )
            ).inserted_primary_key[0]
            conn.execute(
                insert(Item.__table__),
                [
                    {
                        "dataset_id": ids[split],
                        "position": i,
                        "source_id": f"{split}{i}",
                        "fields": {
                            "premise": f"Premise number {i} of {split} is here.",
                            "hypothesis": f"Hypothesis {i}.",
                        },
                        "gold": "entailment" if i % 2 else "not_entailment",
                        "tags": None,
                    }
                    for i in range(n)
                ],
            )
    config = CrowdConfig(
        platform="prolific",
        study_ids=[PROLIFIC_STUDY],
        consent="We store your answers under a pseudonym.\n\nYou may stop at any time.",
        guidelines="Answer as you would in everyday reading.",
        survey=[SurveyQuestion(name="remarks", prompt="Anything to tell us?")],
    )
    create_study(
        engine,
        name,
        "superglue/rte",
        "quick",
        train_dataset_id=ids["dev"],
        test_dataset_id=ids["test"],
        overrides={
            "training_items": training_items,
            "gate_rule": "threshold",
            "gate_min_items": training_items,
            "gate_threshold": 0.0,  # everyone goes on to the test batch
            "test_sample": test_items,
            "annotators_per_item": k,
            "max_test_items_per_annotator": batch,
        },
        crowd=with_codes(config),
    )
    return engine


@dataclass
class PhaseTally:
    """Seconds per request of each phase, the workers that reached each point, errors."""

    seconds: dict[str, list[float]] = field(default_factory=lambda: {p: [] for p in PHASES})
    reached_test: int = 0
    finished: int = 0
    test_answers: int = 0
    """Test answers the server acknowledged (it sent the next screen after committing)."""
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    all_in_test: tuple[float, int] | None = None
    """The server's CPU seconds and the test answers so far when the last worker of a paced
    run reached the test items (paced_crowd with `cpu`)."""
    at_end: tuple[float, int] | None = None
    """The same at the paced run's end."""

    @property
    def answers(self) -> int:
        return len(self.seconds["training"]) + len(self.seconds["test"])

    def steady_cpu_per_test_answer(self) -> float | None:
        """Server CPU milliseconds per test answer once every worker was at the test items:
        the crowd at its own pace with nobody arriving or training."""
        if self.all_in_test is None or self.at_end is None:
            return None
        answers = self.at_end[1] - self.all_in_test[1]
        return (self.at_end[0] - self.all_in_test[0]) / answers * 1000 if answers else None

    def pct(self, phase: str, q: float) -> float:
        values = sorted(self.seconds[phase]) or [0.0]
        return values[min(len(values) - 1, round(q * (len(values) - 1)))] * 1000


class Browser:
    """One simulated browser: its own aiohttp session (cookies, so its own signed session) on
    its own keep-alive connection (see bench_web.Worker)."""

    def __init__(self, base: str) -> None:
        import aiohttp

        self.base = base
        self.http = aiohttp.ClientSession(
            base_url=base,
            headers={"Origin": base, "HX-Request": "true"},
            cookie_jar=aiohttp.CookieJar(unsafe=True),
            connector=aiohttp.TCPConnector(limit=1),
            timeout=aiohttp.ClientTimeout(total=120),
        )
        self.page = ""
        self.csrf = ""

    async def get(self, path: str, tally: PhaseTally, **params: str) -> str:
        async with self.http.get(path, params=params or None) as response:
            response.raise_for_status()
            tally.requests += 1 + len(response.history)
            self.page = await response.text()
        if found := CSRF.search(self.page):
            self.csrf = found[1]
        return self.page

    async def post(self, path: str, data: dict[str, str], tally: PhaseTally) -> str:
        import aiohttp

        for attempt in (1, 2):
            try:
                async with self.http.post(path, data={"csrf": self.csrf, **data}) as response:
                    response.raise_for_status()
                    tally.requests += 1
                    self.page = await response.text()
                    if found := CSRF.search(self.page):
                        self.csrf = found[1]
                    return self.page
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                if attempt == 2:  # a kept-alive connection closed under the request: resend
                    raise
        raise AssertionError("unreachable")

    def screen(self) -> str:
        found = SCREEN.search(self.page)
        return found[1] if found else "?"

    def phase(self) -> str:
        """What the worker does next: training, test (an item of that phase) or exit."""
        if self.screen() != "item":
            return "exit"
        found = PHASE.search(self.page)
        return found[1] if found else "test"

    async def close(self) -> None:
        await self.http.close()


class CrowdWorker(Browser):
    """A worker on annotate's page, from the platform link to the code."""

    def __init__(self, base: str, n: int) -> None:
        super().__init__(base)
        self.n = n
        self.in_test = False

    async def arrive(self, tally: PhaseTally) -> None:
        t0 = time.perf_counter()
        await self.get(
            "/",
            tally,
            PROLIFIC_PID=f"{self.n:024x}",
            STUDY_ID=PROLIFIC_STUDY,
            SESSION_ID=f"{self.n + 10**9:024x}",
        )
        if self.screen() == "consent":
            await self.post("/consent", {"agree": "yes"}, tally)
        if self.screen() == "guidelines":
            await self.post("/start", {}, tally)
        if self.screen() != "item":
            raise RuntimeError(f"arrival ended on the {self.screen()} screen")
        tally.seconds["arrival"].append(time.perf_counter() - t0)

    async def step(self, tally: PhaseTally) -> bool:
        """One thing a worker does on the current screen: answer (and read the feedback),
        the survey, or wait. False once the worker has their code."""
        kind = self.screen()
        t0 = time.perf_counter()
        if kind == "item":
            ticket = TICKET.search(self.page)
            assert ticket is not None
            form = {"ticket": ticket[1], "answer": random.choice(ANSWERS)}
            if "data-shown-after" in self.page:  # shown by the script: it counts from the feedback
                form["shown_after_ms"] = "0"  # the feedback is clicked through at once
            await self.post("/answer", form, tally)
            if self.screen() == "feedback":
                # "Continue", as the page's script does it: the item that came with the
                # feedback, with no request; without one, the server is asked.
                if ready := READY.search(self.page):
                    self.page = ready[1]
                else:
                    await self.get("/screen", tally, next="1")
                tally.seconds["training"].append(time.perf_counter() - t0)
            else:
                if not self.in_test:
                    self.in_test = True
                    tally.reached_test += 1
                tally.test_answers += 1
                tally.seconds["test"].append(time.perf_counter() - t0)
            return True
        if kind == "survey":
            await self.post("/survey", {"q:remarks": "none"}, tally)
            tally.seconds["exit"].append(time.perf_counter() - t0)
            return True
        if kind == "exit":
            tally.finished += 1
            return False
        if kind == "waiting":
            await self.get("/screen", tally)
            return True
        raise RuntimeError(f"unexpected screen {kind}")


class BareWorker(Browser):
    """The same worker on the bare page: arrive (one insert, one select), then answers."""

    def __init__(self, base: str, n: int, batch: int) -> None:
        super().__init__(base)
        self.n = n
        self.left = batch
        """Answers to give, as a crowd worker's test batch."""

    async def arrive(self, tally: PhaseTally) -> None:
        t0 = time.perf_counter()
        await self.get("/", tally, id=str(self.n))
        tally.seconds["arrival"].append(time.perf_counter() - t0)
        tally.reached_test += 1  # the bare page has no other phase: its answers are test answers

    async def step(self, tally: PhaseTally) -> bool:
        fields = dict(HIDDEN.findall(self.page))
        if not fields or self.left <= 0:
            return False
        self.left -= 1
        t0 = time.perf_counter()
        await self.post("/answer", {**fields, "answer": "entailment"}, tally)
        tally.seconds["test"].append(time.perf_counter() - t0)
        tally.test_answers += 1
        return True


async def paced_crowd(
    make,
    count: int,
    seconds: float,
    pace: float,
    ramp: float,
    spread: float,
    cpu: Callable[[], float] | None = None,
) -> PhaseTally:
    """`count` workers arriving at random over `ramp` seconds, each then taking `pace` +-
    `spread` seconds on every item (consent, guidelines, feedback and survey are clicked
    through at once), until `seconds` after the start or their code. `cpu()`: the server's
    CPU seconds, read when the last worker reaches the test items and at the end
    (PhaseTally.steady_cpu_per_test_answer)."""
    tally = PhaseTally()
    end = time.monotonic() + seconds

    def note_all_in_test() -> None:
        if cpu is not None and tally.all_in_test is None and tally.reached_test == count:
            tally.all_in_test = (cpu(), tally.test_answers)

    async def one(n: int) -> None:
        worker = make(n)
        try:
            await asyncio.sleep(random.uniform(0, ramp))
            await worker.arrive(tally)
            note_all_in_test()
            while time.monotonic() < end:
                await asyncio.sleep(pace * random.uniform(1 - spread, 1 + spread))
                if not await worker.step(tally):
                    break
                note_all_in_test()
        except Exception as exc:  # counted and shown, the run goes on
            tally.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            await worker.close()

    async def at_end() -> None:
        await asyncio.sleep(max(end - time.monotonic(), 0.0))
        if cpu is not None and tally.all_in_test is not None:
            tally.at_end = (cpu(), tally.test_answers)

    await asyncio.gather(at_end(), *(one(n) for n in range(count)))
    return tally


async def phase_by_phase(make, count: int, cpu, stop_after: int = 10_000) -> dict[str, object]:
    """`count` workers at once through each phase in turn, as fast as the page answers (all
    arrive; all train; all do their test batch; all take the survey and code), with the
    server's CPU seconds (`cpu()`) per phase: what each kind of request costs."""
    tally = PhaseTally()
    workers = [make(n) for n in range(count)]
    spent: dict[str, float] = {}
    counts: dict[str, int] = {}

    async def run_all(phase: str, job) -> None:
        before, n_before = cpu(), len(tally.seconds[phase])
        results = await asyncio.gather(*(job(w) for w in workers), return_exceptions=True)
        tally.errors += [repr(r) for r in results if isinstance(r, Exception)]
        spent[phase] = cpu() - before
        counts[phase] = len(tally.seconds[phase]) - n_before

    async def until(worker, phase: str) -> None:
        for _ in range(stop_after):
            if worker.phase() != phase or not await worker.step(tally):
                return

    async def arrive(worker) -> None:
        await worker.arrive(tally)

    await run_all("arrival", arrive)
    if isinstance(workers[0], CrowdWorker):
        await run_all("training", lambda w: until(w, "training"))
    await run_all("test", lambda w: until(w, "test"))
    if isinstance(workers[0], CrowdWorker):
        await run_all("exit", lambda w: until(w, "exit"))
    await asyncio.gather(*(w.close() for w in workers))
    return {"tally": tally, "cpu": spent, "counts": counts}
