"""runner.textsafe: what a capsule controls, fit for a terminal and one error line."""
from __future__ import annotations

import time

from runner.errors import CapsuleError
from runner.textsafe import ELLIPSIS, cell, escaped, shown


def test_control_characters_surrogates_and_bidi_marks_are_escaped() -> None:
    assert escaped("a\x1b[2J\x07\x7f\x9b\ud800\u202eb") == "a\\x1b[2J\\x07\\x7f\\x9b\\ud800\\u202eb"
    assert escaped("tab\tnew\nline") == "tab\\x09new\\x0aline"
    assert escaped("tab\tnew\nline", keep_lines=True) == "tab\tnew\nline"
    assert escaped("é 東京 \U0001f600") == "é 東京 \U0001f600"


def test_shown_cuts_with_an_ellipsis_and_costs_no_more_for_huge_values() -> None:
    assert shown("x" * 10, 10) == "x" * 10
    assert shown("x" * 11, 10) == "x" * 9 + ELLIPSIS
    assert shown("\x1b" * 5, 10) == "\\x1b\\x1b\\" + ELLIPSIS
    started = time.perf_counter()
    assert len(shown("y" * 50_000_000, 80)) == 80
    assert time.perf_counter() - started < 1


def test_shown_names_an_integer_python_will_not_print() -> None:
    assert shown(10**5000, 80).startswith("<an integer of about 5000 digits>"[:20])


def test_a_cell_is_one_line_and_cuts_huge_values() -> None:
    assert cell("a\nb\u2028c") == "a\\x0ab\\u2028c"
    many = cell("line\n" * 1000)
    assert "\n" not in many and "(cut: 5,000 characters in all)" in many


def test_a_capsule_error_escapes_and_cuts_its_problem() -> None:
    line = CapsuleError("c.json", "bad value " + "\x1b[2J" * 1000).line()
    assert line.startswith("c.json: bad value \\x1b[2J") and line.endswith(ELLIPSIS) and len(line) <= 210
    assert "\x1b" not in line
