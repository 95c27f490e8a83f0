"""Make text from data files and from people safe to show on a terminal.

A terminal obeys control characters wherever they appear: `ESC [ 2 J` in a premise clears the
screen, `ESC ] 2 ; … BEL` sets the window title, `ESC [ 31 m` colours what follows, and bidi
overrides (U+202E …) make text read differently from what is stored. `terminal_safe` turns each
such character into a visible placeholder, so `\\x1b[2J` is shown as `␛[2J` (the rest of a
sequence is plain text once its ESC is inert). Newline and tab stay; so do square brackets:
this is not markup escaping (`[CLS]` stays `[CLS]`: markup is never parsed at all).

Every string that reaches a terminal goes through here: the TUIs, the CLI's tables and messages,
the reports. It is pure Python with no imports from the project, so every layer may use it.
"""

from __future__ import annotations

import re
from typing import Any

BIDI_CONTROLS = {
    0x202A: "LRE",
    0x202B: "RLE",
    0x202C: "PDF",
    0x202D: "LRO",
    0x202E: "RLO",
    0x2066: "LRI",
    0x2067: "RLI",
    0x2068: "FSI",
    0x2069: "PDI",
}
"""Embeddings, overrides and isolates: they reorder what follows them ("Trojan Source").
The plain marks (LRM, RLM) only nudge neutral characters and stay."""

KEPT = {0x09, 0x0A}  # tab and newline lay text out; they move no cursor anywhere surprising


def _placeholder(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␛ … ␟
    if code == 0x7F:
        return "␡"
    if code in BIDI_CONTROLS:
        return f"⟨{BIDI_CONTROLS[code]}⟩"
    return f"⟨U+{code:04X}⟩"  # C1 controls (0x80–0x9F, CSI is 0x9B) have no pictures


CONTROL_CODES = (*(c for c in range(0x20) if c not in KEPT), *range(0x7F, 0xA0))
"""The C0 controls but tab and newline, DEL, and the C1 controls (0x80–0x9F): what a terminal
obeys rather than shows. Text that is stored clean (a curated sentence) drops them by this
same rule; zero-width joiners (U+200C, U+200D), which Persian and emoji need, are not among
them."""

_UNSAFE_CODES = [*CONTROL_CODES, *BIDI_CONTROLS]
_TABLE = {code: _placeholder(code) for code in _UNSAFE_CODES}
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in _UNSAFE_CODES) + "]")


def terminal_safe(text: str) -> str:
    """`text` with every control character (but newline and tab), ESC sequence and bidi
    control made visible. Idempotent, and the identity on ordinary text."""
    if _UNSAFE.search(text) is None:
        return text  # the common case, at the cost of one scan
    # A Windows line end is a line end, not a carriage return that overwrites the line.
    return text.replace("\r\n", "\n").translate(_TABLE)


def is_terminal_safe(text: str) -> bool:
    return _UNSAFE.search(text) is None


def safe_offset(text: str, index: int) -> int:
    """Where character `index` of `text` lands in `terminal_safe(text)` (for highlights)."""
    return len(terminal_safe(text[:index]))


def terminal_safe_value(value: Any) -> Any:
    """Every string inside a JSON-like value (dicts, lists) made terminal-safe; other values
    unchanged. For item fields, whose strings may sit in nested lists (MultiRC, ReCoRD)."""
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, dict):
        return {k: terminal_safe_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(terminal_safe_value(v) for v in value)
    return value


_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)(?P<password>\S+)(?=@)", re.I
)
_KEY_PASSWORD = re.compile(r"(?P<head>\bpassword\s*=\s*)(?P<password>'[^']*'|\"[^\"]*\"|\S+)", re.I)


def redacted(text: str) -> str:
    """`text` with the password of every connection URL (`postgresql://ann:SECRET@host`) and
    of every `password=...` setting replaced by ***: for logs, errors and tracebacks. A
    password runs to the last @ of its URL: one typed with a bare @ or / is hidden whole (one
    with a bare space is not: in free text, a space ends the URL; see `redacted_url`)."""
    text = _URL_PASSWORD.sub(lambda m: m["head"] + "***", text)
    return _KEY_PASSWORD.sub(lambda m: m["head"] + "***", text)


_WHOLE_URL_PASSWORD = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^:/@]*:)[^@]*(?=@)", re.I)
"""The password of a string that is one URL, as SQLAlchemy reads it: from the user name's :
to the next @, spaces included."""


def redacted_url(url: str) -> str:
    """`url`, a whole connection URL as the user gave it, with its password replaced by ***
    (`redacted`'s rule, and a password typed with a bare space hidden too)."""
    return redacted(_WHOLE_URL_PASSWORD.sub(lambda m: m["head"] + "***", url, count=1))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula (OWASP's list)."""


def neutralised(text: str) -> str:
    """Text from people (comments, names, ids, item text) as a spreadsheet shows it, never
    runs it: a CSV cell that would start a formula gets a leading apostrophe. A number
    ("-0.5") is left alone: it is no formula. The one such guard of every CSV annotate writes
    (exports, pay files, survey answers)."""
    if not text.startswith(FORMULA_STARTS):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text
