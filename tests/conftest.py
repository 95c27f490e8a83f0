"""Shared fixtures: a throwaway store and a CLI runner pointed at it.

Stores on both backends: `store_url` (and `new_store_url`, for several stores in one test) is
parametrised over SQLite and PostgreSQL. The PostgreSQL server is the one named by
ANNOTATE_TEST_POSTGRES (.ci/run starts one), else a throwaway one this run starts itself
(tests/pg.py). Where no server can be started the PostgreSQL cases skip with the reason, except
under CI=true, where they fail: CI must not pass without them.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from annotate.cli import app
from annotate.errors import UserError
from annotate.text import terminal_safe
from annotate.workspace import open_workspace
from tests import pg

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TEST_DATA_ENV = "ANNOTATE_TEST_DATA"
DEFAULT_SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


def shared_data() -> Path:
    """The folder of real GLUE/SuperGLUE sample files: ANNOTATE_TEST_DATA, else ../shared/data
    beside the project (never in it: the files are not redistributable)."""
    chosen = os.environ.get(TEST_DATA_ENV)
    return Path(chosen).expanduser() if chosen else DEFAULT_SHARED_DATA


SHARED_DATA = shared_data()
POSTGRES_URL_ENV = "ANNOTATE_TEST_POSTGRES"
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def pytest_configure(config: pytest.Config) -> None:
    """A private Hugging Face cache for this test process, set before `datasets` is imported.
    The user's cache stays untouched, nothing is fetched, and a lock file left in a shared
    cache cannot stall a run: where fcntl is missing (the no-fcntl half of .ci/run) filelock
    falls back to soft locks, for which any lock file left behind means "held" forever."""
    cache = tempfile.mkdtemp(prefix="annotate-hf-")
    config.stash[_HF_CACHE] = cache
    os.environ["HF_HOME"] = cache
    os.environ["HF_DATASETS_CACHE"] = os.path.join(cache, "datasets")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"


SERIAL_FILES = frozenset(
    {
        "tests/integration/test_crowd_workers.py",
        "tests/integration/test_faults.py",
        "tests/integration/test_group_commit_durability.py",
        "tests/integration/test_load.py",
        "tests/integration/test_outage.py",
        "tests/integration/test_processes.py",
        "tests/integration/test_serve.py",
        "tests/integration/test_serve_bounds.py",
        "tests/tui/test_console.py",
        "tests/unit/test_checkpoint.py",
        "tests/unit/test_handout_concurrency.py",
        "tests/unit/test_keypress_path.py",
        "tests/unit/test_set_aside.py",
        "tests/unit/test_store_refused.py",
        "tests/web/test_page_browser_scroll.py",
        "tests/web/test_page_doors.py",
        "tests/web/test_thirty_prolific_workers.py",
        "tests/web/test_two_servers.py",
    }
)
"""Files whose slow tests race processes against each other or measure waits (leases, the
writers' lock, a sign-in's delay, a redraw within 2 s): .ci/run runs them one at a time
(marked `serial` here), and the other slow tests two at a time."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        if Path(str(item.path)).relative_to(root).as_posix() in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)


def pytest_unconfigure(config: pytest.Config) -> None:
    cache = config.stash.get(_HF_CACHE, None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


_HF_CACHE = pytest.StashKey[str]()


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture(autouse=True, scope="session")
def _every_json_report_follows_its_schema() -> Iterator[None]:
    """Each report a test turns into JSON is validated against the published schema
    (`annotate report --schema`, docs/report-schema.md) where it is made."""
    from tests.report_schema_check import checking_reports

    with checking_reports():
        yield


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def workspace(db_url: str):
    ws = open_workspace(db_url, create=True)
    yield ws
    ws.engine.dispose()


@pytest.fixture
def cli(db_url: str, monkeypatch: pytest.MonkeyPatch):
    """Run `annotate ARGS` against the test store, as the console script would: a UserError
    becomes exit status 1 with `error: …` on stderr (2 is left to usage errors)."""
    monkeypatch.delenv("ANNOTATE_DB", raising=False)

    def invoke(*args: str) -> CliResult:
        result = CliRunner().invoke(app, ["--db", db_url, *map(str, args)])
        if isinstance(result.exception, UserError):
            message = terminal_safe(str(result.exception))
            return CliResult(1, result.stdout, result.stderr + f"error: {message}\n")
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


def shared_file(relative: str) -> Path:
    """A real data file from the test-data folder (`shared_data()`: ANNOTATE_TEST_DATA, else
    ../shared/data beside the project root, wherever pytest runs from). Absent on a user's fresh
    clone: the test skips. Under CI=true it fails instead, since CI has the files and must not
    pass without the tests that read them."""
    path = shared_data() / relative
    if not path.exists():
        message = f"real data not present: {path} (set {TEST_DATA_ENV}=DIR to point at them)"
        if _under_ci():
            pytest.fail(f"{message} (CI=true: the real-data tests must run)", pytrace=False)
        pytest.skip(message)
    return path


# --- both backends ---------------------------------------------------------------------------


def _postgres_unavailable(reason: str) -> None:
    message = f"PostgreSQL tests need a server: {reason}"
    if _under_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _admin(url: str):
    """An autocommit connection to the maintenance database (CREATE DATABASE needs one)."""
    import psycopg

    return psycopg.connect(url.replace("+psycopg", ""), autocommit=True, connect_timeout=10)


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """The URL of a PostgreSQL server's maintenance database, for the whole run."""
    url = os.environ.get(POSTGRES_URL_ENV)
    server = None
    if not url:
        try:
            server = pg.start()
        except pg.PostgresUnavailable as exc:
            _postgres_unavailable(str(exc))
        assert server is not None
        url = server.url
    try:
        _admin(url).close()
    except Exception as exc:
        _postgres_unavailable(f"cannot connect to {url}: {exc}")
    yield url
    if server is not None:
        pg.stop(server.folder)


_database_numbers = itertools.count()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def new_store_url(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], str]]:
    """Make fresh, empty stores on the test's backend: SQLite files in tmp_path, or new
    PostgreSQL databases (dropped after the test, so tests never see each other's rows)."""
    made: list[str] = []
    admin_url = request.getfixturevalue("postgres_admin_url") if backend == "postgresql" else ""

    def make() -> str:
        n = next(_database_numbers)
        if backend == "sqlite":
            return f"sqlite:///{tmp_path / f'store-{n}.db'}"
        name = f"annotate_test_{os.getpid()}_{n}"
        with _admin(admin_url) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return admin_url.rsplit("/", 1)[0] + f"/{name}"

    yield make
    if made:
        with _admin(admin_url) as conn:
            for name in made:  # FORCE: a killed worker's connection may linger a moment
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def store_url(backend: str, new_store_url: Callable[[], str]) -> str:
    """An empty store on each backend in turn (the test runs once per backend)."""
    return new_store_url()


# --- the PostgreSQL tests did run: a line in the summary, and no silent skip under CI ----------

_postgres_outcomes: dict[str, str] = {}


def _under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if item.get_closest_marker("postgres") is None:
        return report
    if report.skipped and _under_ci():
        report.outcome = "failed"  # CI must not pass with the PostgreSQL half skipped
        report.longrepr = f"skipped under CI=true: {report.longrepr}"
    return report


_summary_lines: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Lines a test asks to show after the run (`record_property("summary", ...)`), and the
    PostgreSQL-marked tests' outcomes: they come back from xdist workers with the report (its
    keywords name its markers), so they reach this process either way."""
    if report.when == "call":
        _summary_lines.extend(v for k, v in report.user_properties if k == "summary")
    if "postgres" in report.keywords and (report.when == "call" or report.outcome != "passed"):
        _postgres_outcomes.setdefault(report.nodeid, report.outcome)
        if report.outcome != "passed":
            _postgres_outcomes[report.nodeid] = report.outcome


def pytest_terminal_summary(terminalreporter) -> None:
    for line in _summary_lines:
        terminalreporter.write_line(line)
    if not _postgres_outcomes:
        return
    counts = {
        o: list(_postgres_outcomes.values()).count(o) for o in ("passed", "failed", "skipped")
    }
    url = os.environ.get(POSTGRES_URL_ENV) or "a server started by this run"
    terminalreporter.write_line(
        f"PostgreSQL-marked tests ({url}): {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['skipped']} skipped"
    )
