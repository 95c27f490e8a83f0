"""A throwaway PostgreSQL server for the tests: `initdb` + `pg_ctl` in a temporary folder,
listening on a free loopback port, stopped and deleted at the end.

Used two ways:
- `.ci/run` starts one for the whole test run (`python -m tests.pg start DIR` prints its URL,
  `python -m tests.pg stop DIR` stops it) and passes the URL on in ANNOTATE_TEST_POSTGRES;
- a developer's plain `pytest` starts one itself (tests/conftest.py) when no URL is given.

`initdb` refuses to run as root, so as root the server runs as the unprivileged user `nobody`
in a folder that user owns (DESIGN.md, "PostgreSQL in CI").
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

UNPRIVILEGED_USER = "nobody"
START_TIMEOUT_S = 60
SUPERUSER = "postgres"
URL_FILE = "url"
"""Inside the server folder: the URL of the running server (for `stop` and for reuse)."""

# The tests never crash the server itself (only its clients), so flushing to disk buys nothing
# here and costs most of the run time on a small CI machine.
SERVER_SETTINGS = (
    "-c fsync=off -c full_page_writes=off -c synchronous_commit=on "
    "-c max_connections=200 -c shared_buffers=64MB"
)
DURABLE_SETTINGS = "-c synchronous_commit=on -c max_connections=200 -c shared_buffers=64MB"
"""For measurements (bench/bench_web.py --postgres): every commit flushed, as in production."""


class PostgresUnavailable(RuntimeError):
    """No server could be started here; the message says why."""


def find_bin_dir() -> Path:
    """The folder with initdb and pg_ctl: on PATH, or the newest /usr/lib/postgresql/N/bin."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not candidates:
        raise PostgresUnavailable(
            "no PostgreSQL binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; "
            "install them with `apt-get install postgresql`"
        )
    return candidates[-1].parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    folder: Path
    port: int

    @property
    def url(self) -> str:
        """Superuser URL of the maintenance database (tests create their own databases)."""
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/postgres"


def socket_url(url: str) -> str:
    """`url`'s database reached through the server's Unix socket (the first directory it
    listens in), not TCP: how annotate connects to a server on its own machine. Asked of the
    server itself, so it holds for a server this module did not start."""
    import psycopg
    from sqlalchemy.engine import URL, make_url

    with psycopg.connect(url.replace("+psycopg", ""), connect_timeout=10) as conn:
        folders = conn.execute("SHOW unix_socket_directories").fetchone()[0]
        port = conn.execute("SHOW port").fetchone()[0]
    tcp = make_url(url)
    local = URL.create(  # URL.set cannot take the host away
        tcp.drivername,
        tcp.username,
        tcp.password,
        database=tcp.database,
        query={"host": folders.split(",")[0].strip(), "port": str(port)},
    )
    return local.render_as_string(hide_password=False)


def _run_as(user: str | None, args: list[str], log: Path | None = None) -> None:
    """Run a server binary, as `user` when we are root. Output goes to `log` (pg_ctl start
    leaves the server's stderr open, so a pipe here would never reach end-of-file)."""
    kwargs: dict = {"env": {**os.environ, "LC_ALL": "C", "LANG": "C"}, "cwd": "/"}
    if user is not None:
        entry = pwd.getpwnam(user)
        kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
    with (log or Path(os.devnull)).open("ab") as out:
        result = subprocess.run(
            args, stdout=out, stderr=subprocess.STDOUT, timeout=START_TIMEOUT_S, **kwargs
        )
    if result.returncode != 0:
        detail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
        raise PostgresUnavailable(f"{' '.join(args[:2])} failed ({result.returncode}): {detail}")


def _server_user() -> str | None:
    return UNPRIVILEGED_USER if os.geteuid() == 0 else None


def start(folder: Path | None = None, *, durable: bool = False) -> Server:
    """initdb + pg_ctl start in `folder` (a new temporary folder by default). `durable`: with
    fsync on (DURABLE_SETTINGS), for measurements; the tests' server skips it."""
    bin_dir = find_bin_dir()
    folder = Path(folder or tempfile.mkdtemp(prefix="annotate-pg-"))
    folder.mkdir(parents=True, exist_ok=True)
    user = _server_user()
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    os.chmod(folder, 0o700)
    data, log = folder / "data", folder / "setup.log"
    port = free_port()
    try:
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", SUPERUSER]
        _run_as(user, [*initdb, "-E", "UTF8", "--locale=C", "--no-sync"], log)
        settings = DURABLE_SETTINGS if durable else SERVER_SETTINGS
        options = f"-p {port} -k {folder} -h 127.0.0.1 {settings}"
        pg_ctl = [str(bin_dir / "pg_ctl"), "start", "-w", "-t", str(START_TIMEOUT_S)]
        # the server writes its own log (as its user), not into the file we capture
        server_log = str(data / "server.log")
        _run_as(user, [*pg_ctl, "-D", str(data), "-l", server_log, "-o", options], log)
    except (OSError, subprocess.TimeoutExpired, KeyError) as exc:
        raise PostgresUnavailable(f"could not start PostgreSQL in {folder}: {exc}") from None
    server = Server(folder, port)
    (folder / URL_FILE).write_text(server.url)
    return server


def stop(folder: Path, *, remove: bool = True) -> None:
    """Stop the server started in `folder` (fast shutdown: clients are disconnected)."""
    data = folder / "data"
    if (data / "postmaster.pid").exists():
        _run_as(
            _server_user(),
            [str(find_bin_dir() / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(data)],
        )
    if remove:
        shutil.rmtree(folder, ignore_errors=True)


def stop_now(server: Server) -> None:
    """Stop the server as a crash would (`-m immediate`), keeping its data for `restart`."""
    data = server.folder / "data"
    _run_as(
        _server_user(),
        [str(find_bin_dir() / "pg_ctl"), "stop", "-w", "-m", "immediate", "-D", str(data)],
    )


def restart(server: Server) -> None:
    """Start a server stopped by `stop_now` again, on the same port and data."""
    data = server.folder / "data"
    options = f"-p {server.port} -k {server.folder} -h 127.0.0.1 {SERVER_SETTINGS}"
    pg_ctl = [str(find_bin_dir() / "pg_ctl"), "start", "-w", "-t", str(START_TIMEOUT_S)]
    _run_as(
        _server_user(),
        [*pg_ctl, "-D", str(data), "-l", str(data / "server.log"), "-o", options],
        server.folder / "setup.log",
    )


def main(argv: list[str]) -> int:
    """`python -m tests.pg start DIR` prints the URL; `python -m tests.pg stop DIR`."""
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m tests.pg start|stop DIR", file=sys.stderr)
        return 2
    command, folder = argv[0], Path(argv[1])
    try:
        if command == "start":
            print(start(folder).url)
        else:
            stop(folder)
    except PostgresUnavailable as exc:
        print(f"PostgreSQL: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
