"""The failure signature must match twin's, and be the same for one failure on two machines."""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.verdict.signature import (
    FailureSignature,
    compute,
    is_key_line,
    key_lines,
    last_lines,
    normalize,
    normalize_line,
    output_tail,
    signature,
)

TESTS = Path(__file__).resolve().parents[2]
EXAMPLES = TESTS / "fixtures" / "examples" / "twin"
CASES = TESTS / "cases" / "signature"
TOOLS = sorted(p.name for p in CASES.iterdir() if (p / "a.txt").is_file())
TWIN_EXAMPLES = sorted(p.name for p in (CASES / "twin-examples").glob("*.json"))

ECHARTS_KEY_LINES = (
    "FAIL test/ut/spec/util/time.test.ts",
    "✕ roundTime_locale",
    "expect(received).toEqual(expected) // deep equality",
    "Expected: 528526800000",
    "Received: 528523200000",
    "Test Suites: 1 failed, 1 total",
    "Tests: 1 failed, 14 passed, 15 total",
)


def _case(tool: str, variant: str) -> str:
    return (CASES / tool / f"{variant}.txt").read_text(encoding="utf-8")


def _sha16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# --- known answers -------------------------------------------------------------------


def test_echarts_capsule_output_tail_gives_its_recorded_signature() -> None:
    failure = json.loads((EXAMPLES / "echarts-new-york.json").read_text("utf-8"))["command"]["failure"]
    result = compute(failure["outputTail"], 1)
    assert result == FailureSignature(ECHARTS_KEY_LINES, "exit1:0aee0834ac9c4d2d")
    assert list(result.key_lines) == failure["keyLines"]
    assert result.signature == failure["signature"]


def test_echarts_raw_output_gives_the_same_signature() -> None:
    raw = (EXAMPLES / "echarts-new-york.out.txt").read_text("utf-8")
    assert key_lines(raw) == ECHARTS_KEY_LINES
    assert compute(raw, 1).signature == "exit1:0aee0834ac9c4d2d"


@pytest.mark.parametrize("name", TWIN_EXAMPLES)
def test_twin_recorded_examples_recompute_exactly(name: str) -> None:
    case = json.loads((CASES / "twin-examples" / name).read_text("utf-8"))
    result = compute(case["outputTail"], case["exitCode"], case["signal"])
    assert list(result.key_lines) == case["keyLines"]
    assert result.signature == case["signature"]


def test_twin_examples_are_collected() -> None:
    assert len(TWIN_EXAMPLES) >= 2


# --- the same failure on two machines ------------------------------------------------


def test_all_tools_are_collected() -> None:
    assert set(TOOLS) >= {"jest", "vitest", "pytest", "gotest", "cargo"}


@pytest.mark.parametrize("tool", TOOLS)
def test_same_failure_on_two_machines_gives_same_signature(tool: str) -> None:
    a, b = _case(tool, "a"), _case(tool, "b")
    assert compute(a, 1) == compute(b, 1)
    assert len(key_lines(a)) >= 5


@pytest.mark.parametrize("tool", TOOLS)
def test_machine_differences_reach_the_key_lines(tool: str) -> None:
    """The pair is a real test only if raw key lines differ before normalisation."""

    def raw_key_lines(text: str) -> list[str]:
        return [raw for raw in text.split("\n") if is_key_line(normalize_line(raw))]

    assert raw_key_lines(_case(tool, "a")) != raw_key_lines(_case(tool, "b"))


@pytest.mark.parametrize("tool", TOOLS)
def test_a_different_failure_gives_a_different_signature(tool: str) -> None:
    assert compute(_case(tool, "a"), 1).signature != compute(_case(tool, "different"), 1).signature


def test_cargo_left_right_values_are_not_key_lines() -> None:
    """twin's rule: `left: 4` carries no keyword, so the value alone does not change it."""
    a = _case("cargo", "a")
    other_value = a.replace("  left: -250", "  left: 0")
    assert other_value != a
    assert compute(other_value, 1) == compute(a, 1)


@pytest.mark.parametrize("tool", TOOLS)
def test_normalisation_is_idempotent(tool: str) -> None:
    for line in normalize(_case(tool, "b")):
        assert normalize_line(line) == line


# --- step 4: the signature -----------------------------------------------------------


def test_signature_hashes_lines_joined_by_newline_without_trailing_newline() -> None:
    joined, with_trailing = "a\nb", "a\nb\n"
    assert signature(["a", "b"], 1, None) == f"exit1:{_sha16(joined)}"
    assert signature(["a", "b"], 1, None) != f"exit1:{_sha16(with_trailing)}"


def test_signal_replaces_the_exit_code() -> None:
    exit_form = signature(ECHARTS_KEY_LINES, 1, None)
    signal_form = signature(ECHARTS_KEY_LINES, None, "SIGSEGV")
    assert signal_form == "SIGSEGV:0aee0834ac9c4d2d"
    assert exit_form.split(":")[1] == signal_form.split(":")[1]
    assert compute("Segmentation fault (core dumped)", None, "SIGSEGV").signature.startswith("SIGSEGV:")


def test_other_exit_codes_and_a_null_exit_code() -> None:
    assert signature(["x"], 2, None).startswith("exit2:")
    assert signature(["x"], 137, None).startswith("exit137:")
    # twin interpolates JavaScript's null.
    assert signature(["x"], None, None).startswith("exitnull:")


def test_empty_key_lines_hash_the_empty_string() -> None:
    assert signature([], 1, None) == "exit1:e3b0c44298fc1c14"
    assert compute("", 1) == FailureSignature((), "exit1:e3b0c44298fc1c14")


def test_lone_surrogate_hashes_as_replacement_character() -> None:
    assert signature(["bad \ud800 char"], 1, None) == signature(["bad \ufffd char"], 1, None)


# --- step 3: key lines ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Error: boom",
        "ERRORS: 2",
        "it failed",
        "test failure",
        "FAIL src/x.test.ts",
        "3 failing",
        "Unhandled exception in thread",
        "Traceback (most recent call last):",
        "thread 'main' panicked at src/main.rs:2:5:",
        "panic: oops",
        "assert x == 1",
        "Assertion failed",
        "Expected: 1",
        "received 2",
        "cannot open file",
        "Unable to connect",
        "module not found",
        "x is undefined",
        "Segmentation fault (core dumped)",
        "fatal: not a git repository",
        "Abort trap: 6",
        "aborted",
        "✗ one",
        "✕ two",
        "× three",
        "✖ four",
        "x✕y",
    ],
)
def test_key_line_words_and_marks(line: str) -> None:
    assert is_key_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "errorless run",
        "TypeError: x is not a function",  # not a whole word "error"
        "AssertionError",
        "3 failures",
        "preassert hook",
        "abortion",
        "notfound",
        "panicking",
        "segmentation violation",
        "all good",
    ],
)
def test_not_key_lines(line: str) -> None:
    assert not is_key_line(line)


def test_warn_lines_are_left_out() -> None:
    assert not is_key_line('WARN Issue while reading "~/.npmrc". Failed to replace env')
    assert not is_key_line("WARNING: failed to fetch")
    # Only lines that begin with WARN: npm's own prefix is "npm WARN".
    assert is_key_line("npm WARN deprecated glob: failed")
    output = " WARN  deprecated inflight: failed\nFAIL one\n"
    assert key_lines(output) == ("FAIL one",)


def test_at_most_twelve_key_lines_in_order() -> None:
    output = "\n".join(f"error {n}" for n in range(20))
    assert key_lines(output) == tuple(f"error {n}" for n in range(12))


def test_without_key_lines_the_last_eight_lines() -> None:
    output = "\n".join(f"line {n}" for n in range(10)) + "\n\n"
    assert key_lines(output) == tuple(f"line {n}" for n in range(2, 10))
    assert key_lines("only\nthree\nlines") == ("only", "three", "lines")


def test_fallback_lines_are_normalised() -> None:
    assert key_lines("took 12ms\n\x1b[32mdone\x1b[0m") == ("took <duration>", "done")


# --- steps 1 and 2: normalisation ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\x1b[1m\x1b[31mFAIL\x1b[39m\x1b[22m x", "FAIL x"),
        ("\x1b]8;;file:///a/b\x07link\x1b]8;;\x1b\\ text", "link text"),
        ("10%\r50%\r100% done", "100% done"),
        ("at 2024-05-01T10:22:33.481Z ok", "at <time> ok"),
        ("at 2024-05-01 10:22 ok", "at <time> ok"),
        ("at 2024-05-01T10:22:33+02:00 ok", "at <time> ok"),
        ("Start at 9:05:07", "Start at <time>"),
        ("Start at 10:22:33.125 x", "Start at <time> x"),
        ("id 3F2B9C1E-8A4D-4E6F-9B1A-2C3D4E5F6A7B", "id <uuid>"),
        ("addr=0x7ffd5a3c1e80 +0x1f", "addr=<hex> +<hex>"),
        ("commit 3f9a1c2b7d4e5f60", "commit <hash>"),
        ("at 528526800000 ms", "at <duration>"),
        ("value 528526800000", "value 528526800000"),  # all digits: a number, kept
        ("short abc123def", "short abc123def"),  # under 12 characters: kept
        ("at /home/alice/src/app/main.js:3:1", "at <path>/main.js:3:1"),
        ('File "/usr/lib/python3.12/x.py", line 1', 'File "<path>/x.py", line 1'),
        ("see ~/.cache/shop/rates.json", "see <path>/rates.json"),
        ("at C:\\Users\\bob\\app\\main.js", "at <path>/main.js"),
        ("in /tmp", "in /tmp"),  # one segment: kept
        ("src/api/orders.js and ./a/b", "src/api/orders.js and ./a/b"),  # relative: kept
        ("GET http://localhost:3000/x", "GET http://localhost:<port>/x"),
        ("connect 127.0.0.1:54012", "connect 127.0.0.1:<port>"),
        ("listen 0.0.0.0:8080", "listen 0.0.0.0:<port>"),
        ("killed pid 4242", "killed pid <n>"),
        ("(PID=4242)", "(pid <n>)"),
        ("pid:  77", "pid <n>"),
        ("took 1.5s and 20 ms and 3 mins", "took <duration> and <duration> and <duration>"),
        ("5µs 7us 9ns 2h 4 seconds", "<duration> <duration> <duration> <duration> <duration>"),
        ("✓ parses (12 ms)", "✓ parses"),
        ("✓ parses   (<duration>)", "✓ parses"),
        ("  a \t  b  ", "a b"),
        ("\ufeffa\u00a0\u3000b", "a b"),
        ("\r\n", ""),
    ],
)
def test_normalize_line(raw: str, expected: str) -> None:
    assert normalize_line(raw) == expected


def test_noise_lines_are_dropped_before_normalising() -> None:
    output = "\n".join(
        [
            "Error: boom",
            "    at Module._compile (node:internal/modules/cjs/loader:1256:14)",
            "    at process.processTicksAndRejections (/x/y.js:95:5)",
            "    at async Promise.all (index 0)",
            "Node.js v22.3.0",
            "Node.js version check",
            "",
            "   ",
        ]
    )
    assert normalize(output) == ["Error: boom", "Node.js version check"]


def test_host_warnings_are_dropped_as_noise() -> None:
    """As in twin's latest normalize.ts: they describe the machine, not the failure."""
    output = "\n".join(
        [
            ' WARN  Issue while reading "~/.npmrc". Failed to replace env in config: ${NPM_TOKEN}',
            "bash: warning: setlocale: LC_ALL: cannot change locale (en_US.UTF-8)",
            "one",
            "two",
        ]
    )
    assert normalize(output) == ["one", "two"]
    assert key_lines(output) == ("one", "two")
    assert normalize("cannot change locale") == ["cannot change locale"]


def test_bracketed_ipv6_port_needs_a_word_before_it_as_in_twin() -> None:
    # twin's pattern starts with a word boundary, which `[` after a blank is not.
    assert normalize_line("on [::1]:8080") == "on [::1]:8080"
    assert normalize_line("x[::1]:8080") == "x[::1]:<port>"


def test_crlf_lines_keep_only_what_follows_the_carriage_return() -> None:
    """twin splits on \\n and keeps what follows the last \\r: CRLF lines come out empty."""
    assert normalize("error one\r\nerror two\r\n") == []


# --- the window twin fingerprints ----------------------------------------------------


def test_output_tail_keeps_the_last_200_lines() -> None:
    text = "".join(f"l{n}\n" for n in range(250))
    kept = output_tail(text).split("\n")
    assert kept[0] == "l50"
    assert kept[-2:] == ["l249", ""]
    assert output_tail("a\nb") == "a\nb"


def test_output_tail_keeps_the_last_64000_characters() -> None:
    text = "x" * 70_000
    assert output_tail(text) == "x" * 64_000


_PIECES = st.sampled_from(["a", "é", "x" * 700, "\n", "\r\n", "\r", "\x0b", "\x1c", "\u2028", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=400), st.integers(1, 60))
def test_last_lines_read_from_the_window_are_the_outputs_last_lines(pieces: list[str], count: int) -> None:
    text = "".join(pieces)
    assert last_lines(text, output_tail(text), count) == "\n".join(text.splitlines()[-count:])


def test_last_lines_of_a_window_cut_by_characters_come_from_the_whole_output() -> None:
    text = "first\r\n" + "y" * 63_990 + "\r\nlast\n"  # the window's cut splits no line the tail keeps
    assert last_lines(text, output_tail(text), 3) == "first\n" + "y" * 63_990 + "\nlast"


def test_compute_looks_only_at_the_window() -> None:
    stale = "Error: stale\n" * 1000
    filler = "filler\n" * 160
    raw = (EXAMPLES / "echarts-new-york.out.txt").read_text("utf-8")
    assert compute(stale + filler + raw, 1).signature == "exit1:0aee0834ac9c4d2d"
    assert key_lines(stale + filler + raw)[0] == "Error: stale"


# --- hostile input -------------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "text",
    [
        "a" * 5_000_000,
        "1" * 5_000_000,
        " " * 5_000_000 + "x",
        "pid" + " " * 5_000_000,
        "\x1b[" + "1" * 5_000_000,
        "\x1b]" * 2_000_000,
        "/" + "a" * 5_000_000,
        "/a" * 2_500_000,
        "0x" + "f" * 5_000_000 + "g",
        "1:22:33." + "4" * 5_000_000 + "x",
        "(<duration>" * 500_000,
    ],
    ids=["letters", "digits", "blanks", "pid", "csi", "osc", "one-segment", "segments", "hex", "clock", "paren"],
)
def test_long_lines_are_linear(text: str) -> None:
    started = time.monotonic()
    normalize(text)
    assert time.monotonic() - started < 10


@pytest.mark.timeout(60)
def test_many_lines_are_linear() -> None:
    text = "ok at /home/u/x.js:1:2 (3 ms) 0xdeadbeef 2024-01-01T10:00:00Z\n" * 100_000
    started = time.monotonic()
    assert len(key_lines(text)) == 8
    compute(text, 1)
    assert time.monotonic() - started < 20


# --- the one hash ----------------------------------------------------------------------


def test_digest_is_the_hash_part_of_the_signature() -> None:
    from runner.verdict.signature import digest

    assert digest(ECHARTS_KEY_LINES) == "0aee0834ac9c4d2d"
    replaced = ["x", "\ufffd"]
    assert signature(["x", "\ud800"], 3, None) == f"exit3:{digest(replaced)}"


def test_the_twin_reader_checks_a_recorded_hash_with_the_same_digest(tmp_path: Path) -> None:
    from runner.capsules import twin

    doc = json.loads((EXAMPLES / "echarts-new-york.json").read_text("utf-8"))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    assert not [p for p in twin.verify(good).problems if "keyLines" in p.message]
    doc["command"]["failure"]["keyLines"][0] = "FAIL elsewhere"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    (problem,) = [p for p in twin.verify(bad).problems if "is not that of keyLines" in p.message]
    from runner.verdict.signature import digest

    assert digest(doc["command"]["failure"]["keyLines"]) in problem.message
