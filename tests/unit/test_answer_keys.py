"""The answer keys as the terminal's bar draws them (issue 39, item 5): every option in view
at 80 columns, and rows that line up when a scale needs more than one line."""

from __future__ import annotations

import pytest

from annotate import specs
from annotate.presentation.answer_keys import LINE_WIDTH, answer_keys_text, typed_key


def test_cbs_seven_points_are_columns_that_line_up_at_80_columns():
    spec = specs.load_task("superglue/cb")
    lines = answer_keys_text(spec).plain.split("\n")
    assert len(lines) > 1 and all(len(line) <= LINE_WIDTH for line in lines)
    # Each row starts its options at the same columns as the first row.
    starts = [[line.index(f" {p.key} ") for p in spec.answer_scale if f" {p.key} " in line]
              for line in lines]  # fmt: skip
    for row in starts[1:]:
        assert row == starts[0][: len(row)]
    shown = " ".join(lines)
    assert all(p.text in shown for p in spec.answer_scale)


@pytest.mark.parametrize("task", ["superglue/boolq", "glue/sst2", "superglue/wic"])
def test_a_few_short_options_stay_on_one_line(task):
    text = answer_keys_text(specs.load_task(task)).plain
    assert "\n" not in text and len(text) <= LINE_WIDTH


def test_keys_of_several_characters_are_typed_one_at_a_time():
    """A scale from -2 to 10: 10 is 1 then 0, 1 is 1 then Enter (it begins 10), -1 is - then
    1; a digit that continues nothing starts afresh."""
    keys = [str(v) for v in range(-2, 11)]
    assert typed_key(keys, "", "5") == ("5", "")
    assert typed_key(keys, "", "1") == (None, "1")  # 1, or the 1 of 10
    assert typed_key(keys, "1", "0") == ("10", "")
    assert typed_key(keys, "", "-") == (None, "-")
    assert typed_key(keys, "-", "1") == ("-1", "")
    assert typed_key(keys, "1", "7") == ("7", "")  # "17" is no key: 7 alone
    assert typed_key(keys, "", "x") == (None, "")
