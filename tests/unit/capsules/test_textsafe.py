"""runner.textsafe: what a capsule controls, fit for a terminal and one error line."""
from __future__ import annotations

import json
import subprocess
import time

from runner.errors import CapsuleError
from runner.textsafe import ELLIPSIS, cell, escaped, html_plain, json_text, md_block, md_code, md_text, shell_word, shown


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


# -- the other outputs' rules ------------------------------------------------------------

BIDI_AND_SEPARATORS = "\u202e\u2066\u2028\u2029"


def test_json_escapes_c1_bidi_and_line_separators() -> None:
    text = json_text({"argv": ["a\x85b\x9b2J" + BIDI_AND_SEPARATORS + "\x7f\ud800"]})
    assert text == '{"argv": ["a\\u0085b\\u009b2J\\u202e\\u2066\\u2028\\u2029\\u007f\\ud800"]}'
    assert json.loads(text) == {"argv": ["a\x85b\x9b2J" + BIDI_AND_SEPARATORS + "\x7f\ud800"]}  # the same data


def test_markdown_code_spans_hold_any_capsule_text() -> None:
    assert md_code("![x](https://evil.example/p.png)") == "`![x](https://evil.example/p.png)`"
    assert md_code("a``b") == "```a``b```" and md_code("`x") == "`` `x ``"
    assert md_code("\x1b[0Ksection_start:1:x\nfake") == "`\\x1b[0Ksection_start:1:x\\x0afake`"
    assert md_code("a|b", table=True) == "`a\\|b`" and md_code("") == "` `"


def test_markdown_blocks_and_prose() -> None:
    assert md_block(["```", "\x1b]0;t\x07"]) == "````text\n```\n\\x1b]0;t\\x07\n````"
    said = md_text("see [Click here](https://e.example) <img src=x onerror=alert(1)> ![x](y) &amp; *b*")
    assert "\\[Click here\\]" in said and "\\<img" in said and "\\!\\[x\\]" in said and "\\&amp;" in said
    assert "\\*b\\*" in said


def test_html_attributes_lose_their_controls() -> None:
    assert html_plain("caps/\x1b]0;t\x07\u202eevil\x9b.json") == "caps/]0;tevil.json"


def test_a_shell_word_with_controls_is_bash_quoted_and_runs_the_same() -> None:
    word = "x\x1b]0;t\x07'\"\\\u202e\x85y"
    quoted = shell_word(word)
    assert quoted.startswith("$'") and not set(quoted) & set("\x1b\x07\u202e\x85")
    got = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, check=True).stdout
    assert got == word.encode()
    assert shell_word("plain") == "plain" and shell_word("a b") == "'a b'"
