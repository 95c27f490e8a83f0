"""Which label sources there are: the built-in ones, then those that installed packages add
under the entry-point group `annotate.label_sources`, e.g. in a package's pyproject.toml:

    [project.entry-points."annotate.label_sources"]
    quillboard = "annotate_quillboard:QuillboardSource"

A source is loaded when it is needed (its name alone is enough for `--help` and for checking
`--format`); detection loads them all. A package whose source cannot be loaded, or that fails
while reading, is a UserError naming the source and the package, never a traceback.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError, UserError
from annotate.formats.label_sources.labels import LabelFile
from annotate.formats.label_sources.options import ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek

GROUP = "annotate.label_sources"
HERE = "annotate.formats.label_sources"
BUILTIN = {
    "long": f"{HERE}.long:LongSource",
    "mturk": f"{HERE}.mturk:MTurkSource",
    "qualtrics": f"{HERE}.qualtrics:QualtricsSource",
    "potato": f"{HERE}.potato:PotatoSource",
    "labelstudio": f"{HERE}.labelstudio:LabelStudioSource",
}
"""`--format` name -> where its source is ("module:attribute", as an entry point says)."""
FALLBACK = "long"
"""The source of a file that no source claims."""


@dataclass(frozen=True)
class Entry:
    """One registered source, not loaded yet."""

    name: str
    value: str
    """"module:attribute": a LabelSource subclass or instance."""
    package: str | None = None
    """The distribution that registers it; None for a built-in source."""

    @property
    def who(self) -> str:
        return f"label source {self.name!r} from package {self.package or '?'} ({self.value})"

    def load(self) -> LabelSource:
        module, _, attribute = self.value.partition(":")
        try:
            found: Any = importlib.import_module(module.strip())
            for part in filter(None, attribute.strip().split(".")):
                found = getattr(found, part)
            source = found() if isinstance(found, type) else found
        except Exception as exc:  # a third party's import error, missing name, bad __init__
            if self.package is None:
                raise
            raise UserError(f"{self.who} cannot be loaded: {type(exc).__name__}: {exc}") from None
        if not isinstance(source, LabelSource):
            raise UserError(f"{self.who} is not a LabelSource (found {type(source).__name__})")
        if source.name != self.name:
            raise UserError(f"{self.who} calls itself {source.name!r}: the names must agree")
        return source

    def call(self, what: str, path: Path, run: Any, *args: Any) -> Any:
        """`run(*args)`, with a third party's unexpected error turned into a UserError."""
        if self.package is None:
            return run(*args)
        try:
            return run(*args)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(
                f"{self.who} failed in {what} on {path}: {type(exc).__name__}: {exc}"
            ) from None


def plugin_entry_points() -> list[tuple[str, str, str | None]]:
    """(name, value, package) of each entry point in the group, as installed."""
    found = []
    for point in metadata.entry_points(group=GROUP):
        dist = getattr(point, "dist", None)
        found.append((point.name, point.value, dist.name if dist is not None else None))
    return sorted(found)


def entries() -> list[Entry]:
    """The built-in sources, then the installed packages' (a name may appear twice: `get`
    and `sources` refuse that, `names` does not)."""
    builtin = [Entry(name, value) for name, value in BUILTIN.items()]
    return builtin + [Entry(n, v, p or "?") for n, v, p in plugin_entry_points()]


def names() -> list[str]:
    """Every source's name, without loading any: for `--help` and for checking `--format`."""
    return list(dict.fromkeys(entry.name for entry in entries()))


def _unique(found: list[Entry], name: str) -> Entry:
    if len(found) > 1:
        where = " and ".join(e.package or "annotate (built in)" for e in found)
        raise UserError(f"label source {name!r} is registered twice, by {where}: uninstall one")
    return found[0]


@dataclass(frozen=True)
class Loaded:
    """A source with its registration: calls into a third party's code name it when they fail."""

    entry: Entry
    source: LabelSource
    unclaimed: tuple[str, ...] = ()
    """For the long reader detection fell back on: the formats that were tried (none claimed
    the file)."""

    def files(self, path: Path) -> list[Path]:
        """The files an import of `path` reads (a folder's: for its digest)."""
        return self.entry.call("files()", path, self.source.files, path)

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        """The file's labels; the LabelFile names this source and says what the file is."""
        try:
            file = self.entry.call("read()", path, self.source.read, path, options)
        except DataFileError:
            from annotate.formats.label_sources.long import looks_long

            if not self.unclaimed or looks_long(path, options.mapping):
                raise
            raise DataFileError(
                path,
                None,
                f"no known label format matched the file (tried {', '.join(self.unclaimed)}); "
                "pass --format NAME, or give a long file item, annotator and label columns "
                "(--map item=COLUMN …)",
            ) from None
        if not isinstance(file, LabelFile):
            raise UserError(f"{self.entry.who}: read() returned {type(file).__name__}")
        source = self.source
        file.format = source.name
        file.description = file.description or source.description or source.name
        file.unit = file.unit or source.unit
        file.platform = file.platform or source.platform or source.name
        return file


def get(name: str) -> Loaded:
    """The source `--format NAME` names, loaded."""
    found = [entry for entry in entries() if entry.name == name]
    if not found:
        raise UserError(f"--format {name}: known formats are {', '.join(names())}")
    entry = _unique(found, name)
    return Loaded(entry, entry.load())


def loaded() -> list[Loaded]:
    """Every source, loaded: the built-in ones first."""
    all_entries = entries()
    for name in names():
        _unique([e for e in all_entries if e.name == name], name)
    return [Loaded(entry, entry.load()) for entry in all_entries]


def detect(path: Path) -> Loaded:
    """The one source that claims `path`; the long reader when none does (a folder none claims
    is an error). Two claiming one file is an error that asks for `--format`."""
    peek = Peek(path)
    every = loaded()
    claimed = [
        one
        for one in every
        if one.entry.name != FALLBACK and one.entry.call("claims()", path, one.source.claims, peek)
    ]
    if len(claimed) > 1:
        which = ", ".join(f"{one.source.name} ({one.source.description})" for one in claimed)
        raise DataFileError(
            path, None, f"more than one format reads this file: {which}; pass --format NAME"
        )
    if claimed:
        return claimed[0]
    if path.is_dir():
        hints = [one.source.folder_hint for one in every if one.source.folder_hint]
        raise DataFileError(path, None, f"no {' or '.join(hints) or 'label files'} in this folder")
    fallback = next(one for one in every if one.entry.name == FALLBACK)
    tried = tuple(dict.fromkeys(one.entry.name for one in every))
    return Loaded(fallback.entry, fallback.source, unclaimed=tried)


def choose(path: Path, fmt: str | None) -> Loaded:
    """The source `--format` names, else the one detection finds."""
    return get(fmt) if fmt else detect(path)


def read_label_file(
    path: Path,
    fmt: str | None,
    mapping: dict[str, str],
    field_names: list[str],
    *,
    keep_rejected: bool = False,
) -> LabelFile:
    """Read `path` with the source `fmt` names (or detection finds); the LabelFile says which."""
    options = ReadOptions(dict(mapping), list(field_names), keep_rejected=keep_rejected)
    return choose(path, fmt).read(path, options)
