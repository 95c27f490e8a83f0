"""Text from data and people cannot act on the terminal: control characters, ESC sequences and
bidi controls are shown as visible placeholders, everywhere text reaches a terminal."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotate.text import BIDI_CONTROLS, safe_offset, terminal_safe, terminal_safe_value
from tests.unit.test_report import THREE_WAY_ITEMS, THREE_WAY_LABELS, add_study

C0 = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"]
C1 = [chr(c) for c in range(0x7F, 0xA0)]
BIDI = [chr(c) for c in BIDI_CONTROLS]
SEQUENCES = [
    ("\x1b[2J\x1b[H", "␛[2J␛[H"),  # clear the screen, cursor home
    ("\x1b]2;TITLE\x07", "␛]2;TITLE␇"),  # set the window title (OSC … BEL)
    ("\x1b]0;TITLE\x1b\\", "␛]0;TITLE␛\\"),  # the same, ended by ST
    ("\x1b[31m", "␛[31m"),  # red
    ("\x1b[2K\x1b[1G", "␛[2K␛[1G"),  # erase the line, cursor to column 1
    ("\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", "␛]8;;http://evil.example␛\\link"),
    ("\x9b2J", "⟨U+009B⟩2J"),  # the 8-bit CSI
    ("abc\rXY", "abc␍XY"),  # a carriage return would overwrite the line
]
MARKUP_LIKE = [
    "[CLS] a [SEP] b [MASK]",
    "[/foo]",
    "[bold]x[/bold]",
    "[@click=app.quit]x[/]",
    "[sic]",
]


def unsafe(text: str) -> list[str]:
    return [
        ch for ch in text if (unicodedata.category(ch) == "Cc" and ch not in "\n\t") or ch in BIDI
    ]


@pytest.mark.parametrize("ch", C0 + C1 + BIDI, ids=lambda ch: f"U+{ord(ch):04X}")
def test_every_control_code_point_becomes_a_visible_placeholder(ch: str):
    shown = terminal_safe(f"a{ch}b")
    assert not unsafe(shown)
    assert shown.startswith("a") and shown.endswith("b") and len(shown) > 2
    assert all(c.isprintable() for c in shown)


@pytest.mark.parametrize(("raw", "visible"), SEQUENCES)
def test_escape_sequences_are_shown_not_obeyed(raw: str, visible: str):
    shown = terminal_safe(raw)
    assert visible in shown and "\x1b" not in shown and "\x07" not in shown


def test_newline_tab_markup_and_other_scripts_stay_as_written():
    for text in [*MARKUP_LIKE, "line one\nline\ttwo", "שלום עולם", "naïve café ✓", "\u200f"]:
        assert terminal_safe(text) == text
    assert terminal_safe("a\r\nb") == "a\nb"  # a Windows line end is a line end


@given(st.text())
def test_any_text_comes_out_safe_and_sanitising_twice_changes_nothing(text: str):
    shown = terminal_safe(text)
    assert not unsafe(shown)
    assert terminal_safe(shown) == shown
    if not unsafe(text):
        assert shown == text.replace("\r\n", "\n")


def test_offsets_and_nested_values():
    text = "\x1b[1mHi there"
    assert terminal_safe(text)[safe_offset(text, 4) :] == "Hi there"
    assert terminal_safe_value({"a": ["\x07", 3], "b": None}) == {"a": ["␇", 3], "b": None}


# --- the CLI: names with escapes in status, gate, report and annotator list ---------------------

HOSTILE = ["a\x1b[31m1", "a\x1b]2;PWNED\x07" + "2", "a\u202e3", "a\x9b2J4", "[bold]a5"]


VISIBLE = ["a␛[31m1", "a␛]2;PWNED␇2", "a⟨RLO⟩3", "a⟨U+009B⟩2J4", "[bold]a5"]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("status", "mnli"), VISIBLE),
        (("gate", "mnli", "--admit", HOSTILE[1], "--reason", "r", "--force"), VISIBLE[1:2]),
        (("report", "mnli"), VISIBLE),
        (("annotator", "list"), VISIBLE),
    ],
    ids=["status", "gate", "report", "annotator list"],
)
def test_names_with_escapes_are_shown_with_placeholders(cli, workspace, args, names):
    add_study(
        workspace.engine,
        "mnli",
        "glue/mnli-m",
        THREE_WAY_ITEMS,
        THREE_WAY_LABELS,
        annotators=HOSTILE,
        gate=[(name, True) for name in HOSTILE],
    )
    result = cli(*args)
    assert result.code == 0, result.stderr
    assert not unsafe(result.stdout), args
    for visible in names:  # a table may fold a long name: compare without line breaks
        assert visible in result.stdout or visible[:5] in result.stdout, visible
