"""Every setting annotate reads, in one typed model: the ANNOTATE_* environment variables and
the project file (`annotate.toml`).

Each field is the variable ``ANNOTATE_<FIELD>`` (``db`` is ``ANNOTATE_DB``); its docstring is
the documentation the Configuration page's "Environment variables" table repeats (a test
keeps the two and the code in step). The fields of `PROJECT_KEYS` may also be set in the
project file: `annotate.toml` in the current folder, or the file ANNOTATE_CONFIG
(`--config FILE`) names.
What wins: a command-line option, where there is one, then the environment, then the project
file, then the default.

Code reads settings only through `settings()`, which reads the environment and the project
file afresh on every call: a test or a parent process may change a variable between two calls.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from annotate.errors import DataFileError, UserError, undecodable_at

PREFIX = "ANNOTATE_"
PROJECT_FILE = "annotate.toml"
"""The project file read from the current folder when neither --config nor ANNOTATE_CONFIG
names one."""

DEFAULT_PROTOCOL = "superglue-2019"


class Settings(BaseSettings):
    """The settings in force; a command-line option, where there is one, wins over them."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX,
        # An empty variable means "not set", as the shell's `ANNOTATE_DB=` does.
        env_ignore_empty=True,
        frozen=True,
        use_attribute_docstrings=True,
    )

    db: str | None = None
    """The store: a SQLite path or a database URL (`postgresql+psycopg://user@host/db`), as
    `--db` takes it. Default `annotate.db` in the current folder."""

    debug: bool = False
    """`1` (or `true`, `yes`): an error prints its traceback too, for bug reports (as `--debug`)."""

    config: str | None = None
    """The project file (TOML) to read instead of `annotate.toml` in the current folder, as
    `--config FILE` names it: the store, task and protocol folders and the default protocol."""

    tasks_path: str = ""
    """Folders of task TOML files searched after the built-in ones, separated like `PATH`
    (`:`; `;` on Windows): `annotate tasks` lists them and `--task NAME` finds them."""

    protocols_path: str = ""
    """Folders of protocol presets (TOML) searched after the built-in ones, separated like
    `PATH`: `annotate protocols` lists them and `--protocol NAME` finds them."""

    default_protocol: str = DEFAULT_PROTOCOL
    """The protocol preset (or `.toml` file) `annotate study create` and `annotate plan` use
    when no `--protocol` is given. Default `superglue-2019`."""

    token: str | None = None
    """The annotator's token for `annotate label`, so a script need not
    type it at the prompt."""

    # Finite and not negative: a deadline of nan is never reached (the retries went on forever).
    reconnect_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 30.0
    """How long a command keeps retrying a PostgreSQL server that went away before it stops
    with a clear error (seconds)."""

    serve_tokens: Literal["required", "optional"] | None = None
    """Set by `annotate serve` for the sessions it starts (not by hand): whether an annotator
    must give a token to sign in."""

    web_secret: str | None = None
    """The key that signs the annotator page's session cookies (`annotate serve`). Give every
    process or host serving one study the same value, so a worker's cookie is good on all of
    them; unset, each server makes its own and its cookies last while it runs. Cookies are
    signed with this key bound to the study in its store, so one value for a lab's every
    server lets no cookie of one study or store into another."""

    console_key: str | None = None
    """The key in `annotate serve --console`'s address (`/?key=…`), without which the console
    answers nobody: not even another user or program on this machine, which the loopback
    alone lets in. Unset, each run makes a new one and prints the address with it."""

    page_worker: str | None = None
    """Set by `annotate serve --workers N` for its server processes (not by hand): the page's
    options, as JSON."""

    signin_limits: str | None = None
    """A file (SQLite) where `annotate serve` counts refused sign-ins per name and per address,
    shared by the server processes of one host; unset, each process counts in memory."""

    sqlite_threads: Annotated[int, Field(ge=0, le=64)] | None = None
    """Threads of each `annotate serve` process that do a SQLite store's work; `0`: none, the
    process's event loop does it. Unset, each process measures how fast the store's disk syncs
    before its first answer: no thread where a sync takes under 0.75 ms, four where it is
    slower (many disks, network file systems), whose answers that arrive together share one
    commit and its sync. Set it to choose yourself."""

    prolific_token: SecretStr | None = None
    """The API token of your Prolific workspace, for `annotate prolific`: read from the
    environment only, never printed, logged or stored."""

    prolific_api: str = "https://api.prolific.com/api/v1/"
    """The address of Prolific's API `annotate prolific` calls (as `--api-url`); change it only
    to reach a stand-in."""

    @field_validator("debug", mode="before")
    @classmethod
    def _yes_or_no(cls, value: Any) -> Any:
        # Stricter than pydantic's booleans ("t", "y" …): the spellings the docs name.
        if not isinstance(value, str):
            return value
        lowered = value.strip().lower()
        if lowered not in _TRUE | _FALSE:
            raise PydanticCustomError("yes_or_no", YES_OR_NO)
        return lowered in _TRUE

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Earlier sources win: the environment over the project file; no .env or secrets dir.
        project = InitSettingsSource(settings_cls, init_kwargs=project_values())
        return init_settings, env_settings, project

    def search_path(self, kind: Literal["tasks", "protocols"]) -> list[Path]:
        """The extra folders of ANNOTATE_TASKS_PATH or ANNOTATE_PROTOCOLS_PATH."""
        value = self.tasks_path if kind == "tasks" else self.protocols_path
        return [Path(p) for p in value.split(os.pathsep) if p]


PROLIFIC_ADDRESS = (
    "the http:// or https:// address of Prolific's API, like https://api.prolific.com/api/v1/"
)


def is_http_address(value: str) -> bool:
    """An http:// or https:// URL with a host (and a port that is a number, if any)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- a port that is not a number raises here
    except ValueError:  # "[::1" or a port like ":x"
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}
YES_OR_NO = "expected 1 or 0 (true or false)"


def debug_from_env() -> bool:
    """ANNOTATE_DEBUG alone, as the settings read it, for the command line's --debug: before
    this, click read the variable by its own rule, which took `y` (that the settings then
    refused, with a traceback) and refused `maybe` as a usage error of three lines."""
    name = env_name("debug")
    value = os.environ.get(name)
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered not in _TRUE | _FALSE:
        raise UserError(f"{name}={value!r}: {YES_OR_NO}")
    return lowered in _TRUE


def env_name(field: str) -> str:
    return PREFIX + field.upper()


CONFIG_ENV = env_name("config")


def documented() -> dict[str, str]:
    """Each variable's name and its documentation, in the model's order."""
    return {
        env_name(name): " ".join((info.description or "").split())
        for name, info in Settings.model_fields.items()
    }


def settings() -> Settings:
    """The settings the environment and the project file give now. A value that does not
    parse is a user error naming the variable (or the file, line and key), never a
    traceback."""
    return _settings_from(_inputs())


def _inputs() -> tuple[object, ...]:
    """What the settings are made of: the ANNOTATE_* variables and the project file (its
    place and version). Equal inputs give equal settings."""
    names = sorted(k for k in os.environ if k.upper().startswith(PREFIX))  # as pydantic-settings
    variables = tuple((k, os.environ[k]) for k in names)
    path = project_file()
    if path is None:
        return (variables,)
    stat = path.stat()
    return variables, os.path.abspath(path), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _settings_from(inputs: tuple[object, ...]) -> Settings:
    # pydantic-settings takes a millisecond or two to build the model, and the engine asks for
    # the settings at every answer the simulator gives: the same inputs reuse the (frozen)
    # settings; a changed variable or file is read afresh. Errors are not cached.
    try:
        return Settings()
    except ValidationError as exc:
        # The project file's values are checked as it is read: what fails here is a variable.
        error = exc.errors()[0]
        variable = env_name(str(error["loc"][0]))
        raise UserError(f"{variable}={os.environ.get(variable)!r}: {error['msg']}") from None


def setting_error(field: str, reason: str) -> UserError:
    """A setting whose value parsed but cannot be used (a preset that does not exist): the
    error names where the value was set, the variable or the project file's line, as a value
    that does not parse is named."""
    variable = env_name(field)
    for name, value in os.environ.items():
        if name.upper() == variable and value:  # an empty variable is unset (env_ignore_empty)
            return UserError(f"{name}={value!r}: {reason}")
    path = project_file()
    if path is not None and field in read_project_file(path):
        text = path.read_text(encoding="utf-8")
        return DataFileError(path, _line_of(text, field), f"{field}: {reason}")
    return UserError(f"{field}: {reason}")


# --- the project file ----------------------------------------------------------------------


def project_file() -> Path | None:
    """The project file in force: the one ANNOTATE_CONFIG names (`--config` sets it), else
    `annotate.toml` in the current folder if there is one, else none."""
    named = os.environ.get(CONFIG_ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise UserError(f"{CONFIG_ENV}={named!r}: no such file")
        return path
    local = Path(PROJECT_FILE)
    return local if local.is_file() else None


def project_values() -> dict[str, str]:
    """The settings the project file gives (none without a file), paths made absolute."""
    path = project_file()
    return {} if path is None else read_project_file(path)


def read_project_file(path: Path) -> dict[str, str]:
    """The settings of one project file. Relative paths in it are relative to its folder.
    A mistake is a DataFileError naming the file, the line and the reason."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        raise DataFileError(path, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line, byte = undecodable_at(data, exc)
        raise DataFileError(path, line, f"not UTF-8 text (byte {byte} of the line)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, reason = _toml_error(exc)
        raise DataFileError(path, line, f"not valid TOML: {reason}") from None
    folder = path.resolve().parent
    values: dict[str, str] = {}
    for key, value in data.items():
        read = PROJECT_KEYS.get(key)
        if read is None:
            known = ", ".join(PROJECT_KEYS)
            raise DataFileError(
                path, _line_of(text, key), f"unknown key {key!r} (a project file sets {known})"
            )
        try:
            values[key] = read(value, folder)
        except ValueError as exc:
            raise DataFileError(path, _line_of(text, key), f"{key}: {exc}") from None
    return values


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, not {_toml_type(value)}")
    if not value.strip():
        raise ValueError("is empty (leave the key out for the default)")
    return value


def _in_folder(value: str, folder: Path) -> str:
    return str(folder / Path(value).expanduser())


def _store(value: Any, folder: Path) -> str:
    """A SQLite path (plain or `sqlite:///path`) relative to the file's folder; another URL as
    it is."""
    text = _text(value)
    if text == ":memory:":
        return text
    if "://" not in text:
        return _in_folder(text, folder)
    sqlite, _, database = text.partition(":///")
    if sqlite.startswith("sqlite") and database and not _absolute_database(database):
        return f"{sqlite}:///{_in_folder(database, folder)}"
    return text


def _absolute_database(database: str) -> bool:
    return database.startswith(("/", ":memory:", "file:")) or Path(database).is_absolute()


def _folders(value: Any, folder: Path) -> str:
    """A list of folders (one folder may be a plain string), joined like PATH."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ValueError(f"expected a list of folders, not {_toml_type(value)}")
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(f"expected folder names (strings), not {_toml_type(item)}")
    return os.pathsep.join(_in_folder(item, folder) for item in items)


def _protocol(value: Any, folder: Path) -> str:
    """A preset's name as it is; a .toml file relative to the file's folder."""
    text = _text(value)
    return _in_folder(text, folder) if text.endswith(".toml") else text


PROJECT_KEYS: dict[str, Callable[[Any, Path], str]] = {
    "db": _store,
    "tasks_path": _folders,
    "protocols_path": _folders,
    "default_protocol": _protocol,
}
"""The settings a project file may hold, each with how its value is read."""


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table"}
    if isinstance(value, str) and not value.strip():
        return "an empty string"
    return names.get(type(value), "a date or time")


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def _toml_error(exc: tomllib.TOMLDecodeError) -> tuple[int | None, str]:
    """tomllib puts the place at the end of its message: "… (at line 3, column 5)"."""
    message = str(exc)
    found = _AT.search(message)
    if found is None:
        return None, message
    return int(found.group(1)), f"{message[: found.start()]} (column {found.group(2)})"


def _line_of(text: str, key: str) -> int | None:
    """The line where a top-level key is set (`key = …`, `"key" = …`, `key.sub = …`, `[key]`)."""
    pattern = re.compile(rf"""^\s*(\[+\s*)?(["']?){re.escape(key)}\2\s*[=.\]]""")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None
