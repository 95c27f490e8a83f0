"""Every environment variable annotate reads, in one typed model.

Each field is the variable ``ANNOTATE_<FIELD>`` (``db`` is ``ANNOTATE_DB``); its docstring is
the documentation the README's "Environment variables" table repeats (a test keeps the two and
the code in step). Code reads the environment only through `settings()`, which reads it afresh
on every call: a test or a parent process may change a variable between two calls.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from annotate.errors import UserError

PREFIX = "ANNOTATE_"


class Settings(BaseModel):
    """The environment's settings; a command-line option, where there is one, wins."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    db: str | None = None
    """The store: a SQLite path or a database URL (`postgresql+psycopg://user@host/db`), as
    `--db` takes it. Default `annotate.db` in the current folder."""

    debug: bool = False
    """`1` (or `true`, `yes`): an error prints its traceback too, for bug reports (as `--debug`)."""

    tasks_path: str = ""
    """Folders of task TOML files searched after the built-in ones, separated like `PATH`
    (`:`; `;` on Windows): `annotate tasks` lists them and `--task NAME` finds them."""

    protocols_path: str = ""
    """Folders of protocol presets (TOML) searched after the built-in ones, separated like
    `PATH`: `annotate protocols` lists them and `--protocol NAME` finds them."""

    token: str | None = None
    """The annotator's token for `annotate label`, so a script need not
    type it at the prompt."""

    reconnect_seconds: float = 30.0
    """How long a command keeps retrying a PostgreSQL server that went away before it stops
    with a clear error (seconds)."""

    serve_tokens: Literal["required", "optional"] | None = None
    """Set by `annotate serve` for the sessions it starts (not by hand): whether an annotator
    must give a token to sign in."""

    web_secret: str | None = None
    """The key that signs the annotator page's session cookies (`annotate serve`). Give every
    process or host serving one study the same value, so a worker's cookie is good on all of
    them; unset, each server makes its own and its cookies last while it runs."""

    page_worker: str | None = None
    """Set by `annotate serve --workers N` for its server processes (not by hand): the page's
    options, as JSON."""

    signin_limits: str | None = None
    """A file (SQLite) where `annotate serve` counts refused sign-ins per name and per address,
    shared by the server processes of one host; unset, each process counts in memory."""

    def search_path(self, kind: Literal["tasks", "protocols"]) -> list[Path]:
        """The extra folders of ANNOTATE_TASKS_PATH or ANNOTATE_PROTOCOLS_PATH."""
        value = self.tasks_path if kind == "tasks" else self.protocols_path
        return [Path(p) for p in value.split(os.pathsep) if p]


def env_name(field: str) -> str:
    return PREFIX + field.upper()


def documented() -> dict[str, str]:
    """Each variable's name and its documentation, in the model's order."""
    return {
        env_name(name): " ".join((info.description or "").split())
        for name, info in Settings.model_fields.items()
    }


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def settings(environ: dict[str, str] | None = None) -> Settings:
    """The settings the environment gives now. A value that does not parse is a user error
    naming the variable, never a traceback."""
    source = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for name in Settings.model_fields:
        raw = source.get(env_name(name))
        if raw is None:
            continue
        if name == "debug":
            lowered = raw.strip().lower()
            if lowered not in _TRUE | _FALSE:
                raise UserError(f"{env_name(name)}={raw!r}: expected 1 or 0 (true or false)")
            values[name] = lowered in _TRUE
        elif name == "db" and not raw:
            continue  # an empty ANNOTATE_DB means "not set", as the shell's `ANNOTATE_DB=` does
        else:
            values[name] = raw
    try:
        return Settings(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        variable = env_name(str(error["loc"][0]))
        raise UserError(f"{variable}={source.get(variable)!r}: {error['msg']}") from None
