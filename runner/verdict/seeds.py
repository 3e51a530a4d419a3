"""What replay leaves out of a failure beyond twin's rules: test frameworks' random seeds and
reproduction hints, which a framework prints anew on every run of one and the same failure.

twin's signature (signature.py) keeps them, so a flaky Hypothesis test gets a signature of
its own on every run (`@seed(…)` is on a key line: "…to reproduce this failure"). These
rules are applied on top of twin's, to lines twin's rules have already normalised, and
always to both sides of a comparison: the recorded key lines (as twin recorded them, or as
recomputed from the recorded outputTail) and the attempt's. So a recorded twin signature
still means what twin meant, and `unseeded_signature` is a second fingerprint next to it.

Every pattern is linear in its input: the two with a lazy or greedy middle are bounded.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from . import signature as sig

_A = re.ASCII
_Replacement = str | Callable[[re.Match[str]], str]
# pattern, replacement, a cheap substring test that skips a pattern which cannot match
_Rule = tuple[re.Pattern[str], _Replacement, Callable[[str], bool]]

_RULES: tuple[_Rule, ...] = (
    # Hypothesis: "You can reproduce this failure by adding @seed(1985…) to this test, or by
    # running pytest with --hypothesis-seed=1985…" (a new seed on every run)
    (re.compile(r"@seed\(\d+\)", _A), "@seed(<seed>)", lambda s: "@seed(" in s),
    (re.compile(r"--hypothesis-seed=\d+", _A), "--hypothesis-seed=<seed>", lambda s: "-seed=" in s),
    # Hypothesis: "…by temporarily adding @reproduce_failure('6.170.17', b'AAFBAgFBAgA=') as a
    # decorator": the blob is the failing input's encoding
    (re.compile(r"@reproduce_failure\([^()\n]{0,4000}\)", _A), "@reproduce_failure(<blob>)",
     lambda s: "@reproduce_failure(" in s),
    # pytest-randomly's "Using --randomly-seed=2294562427", jest --randomize's "Seed: -1234",
    # RSpec/vitest-style "Randomized with seed 1234", go test -shuffle's "-test.shuffle 1796…"
    (re.compile(r"(randomly[-_]seed=|[Rr]andomized with seed |\bSeed:[ \t]+|-test\.shuffle )-?\d+", _A),
     r"\1<seed>", lambda s: "eed" in s or "shuffle" in s),
    # Hypothesis's input counts: "0 inputs were generated successfully, while 50 inputs were
    # filtered out", "12 passing examples, 3 failing examples", "(1 sub-exception)"
    (re.compile(r"\b\d+ ((?:passing |failing |invalid |valid )?(?:inputs?|examples?|sub-exceptions?))\b", _A),
     r"<n> \1", lambda s: "input" in s or "example" in s or "sub-exception" in s),
    # …and so does its report of a failing example, on one line ("Falsifying example: f(x=3)")
    (re.compile(r"\b(Falsifying example|Failing test case|Trying example)(: [\w.]+)\([^\n]{1,2000}\)", _A),
     r"\1\2(<example>)", lambda s: "example" in s or "test case" in s),
)


_FLAKY_END = ") produces unreliable results"
_FLAKY_TEST = re.compile(r"Hypothesis [\w.]+\(", _A)
EXAMPLE_CHARS = 2000  # the longest drawn example left out of a flaky report


def _flaky_example(line: str) -> str:
    """Hypothesis's flaky report names the example it happened to draw: "Hypothesis
    test_x(n=42) produces unreliable results: …". Found from its fixed end backwards, so a
    line of a million openings costs one pass."""
    end = line.find(_FLAKY_END)
    while end >= 0:
        start = line.rfind("Hypothesis ", max(0, end - EXAMPLE_CHARS), end)
        m = _FLAKY_TEST.match(line, start) if start >= 0 else None
        if m is not None:
            line = line[: m.end()] + "<example>" + line[end:]
            end = m.end() + len("<example>")
        end = line.find(_FLAKY_END, end + 1)
    return line


# Every rule's trigger holds one of these: most lines hold none and are returned at once.
_TRIGGERS = ("eed", "reproduce_failure", "input", "example", "sub-exception", "shuffle", "test case", "unreliable")


@lru_cache(maxsize=4096)  # a capsule's key lines are compared with every attempt's
def unseeded(line: str) -> str:
    """A line (already normalised by twin's rules) without the frameworks' seeds and hints."""
    if not any(t in line for t in _TRIGGERS):
        return line
    for pattern, replacement, may_match in _RULES:
        if may_match(line):
            line = pattern.sub(replacement, line)
    return _flaky_example(line) if "unreliable results" in line else line


def unseeded_lines(lines: Sequence[str]) -> tuple[str, ...]:
    return tuple(unseeded(line) for line in lines)


def unseeded_signature(key_lines: Sequence[str], exit_code: int | None, signal: str | None) -> str:
    """twin's signature of twin's key lines, each without seeds and hints. The key lines are
    chosen by twin's rule first (a hint is no reason to pick another line), so this is equal
    to twin's own signature whenever no key line carries a seed or a hint."""
    return sig.signature(unseeded_lines(key_lines), exit_code, signal)


# -- the seeds a recorded run names, to apply (build/seeding.py) -----------------------------------

# A seed is applied as one argv word or in one variable: digits only (jest's may be negative), and
# short enough for any framework's integer type (Hypothesis prints 128-bit ones).
_DIGITS = re.compile(r"-?\d{1,40}", _A)
SeedKind = str  # one of KINDS
KINDS = ("hypothesis", "randomly", "go-shuffle", "jest", "PYTHONHASHSEED")

# what each framework prints (in its output) or was given (in the argv), each one's seed in group 1
# a seed ends its word (whitespace, an end of sentence, a closing quote): "12;rm" is not one
_PRINTED: tuple[tuple[SeedKind, re.Pattern[str]], ...] = (
    ("hypothesis", re.compile(r"@seed\((\d{1,40})\)", _A)),
    ("hypothesis", re.compile(r"--hypothesis-seed[= ](\d{1,40})(?![^\s.,)'\"])", _A)),
    ("randomly", re.compile(r"--randomly-seed[= ](\d{1,40})(?![^\s.,)'\"])", _A)),
    ("go-shuffle", re.compile(r"-test\.shuffle[= ](\d{1,40})(?![^\s.,)'\"])", _A)),
    ("jest", re.compile(r"^\s*Seed:\s+(-?\d{1,40})\s*$", _A | re.MULTILINE)),
)
_GIVEN: tuple[tuple[SeedKind, re.Pattern[str]], ...] = (
    ("hypothesis", re.compile(r"--hypothesis-seed(?:=|$)(\d{1,40})?", _A)),
    ("randomly", re.compile(r"--randomly-seed(?:=|$)(\d{1,40})?", _A)),
    ("go-shuffle", re.compile(r"-{1,2}(?:test\.)?shuffle(?:=|$)(\d{1,40})?", _A)),
    ("jest", re.compile(r"--seed(?:=|$)(-?\d{1,40})?", _A)),
)
REPRODUCE_FAILURE = re.compile(r"@reproduce_failure\([^()\n]{0,4000}\)", _A)


def valid_seed(value: str) -> bool:
    """A seed replay may pass on: digits only (a leading minus for jest's)."""
    return _DIGITS.fullmatch(value) is not None


def printed_seeds(text: str) -> dict[SeedKind, str]:
    """The seed each framework printed in a run's output (its last, where it printed several)."""
    found: dict[SeedKind, str] = {}
    for kind, pattern in _PRINTED:
        for m in pattern.finditer(text):
            found[kind] = m.group(1)
    return found


def given_seeds(argv: Sequence[str]) -> dict[SeedKind, str]:
    """The seed each framework was given on its command line (`--randomly-seed=N`, `-shuffle N`)."""
    found: dict[SeedKind, str] = {}
    for i, word in enumerate(argv):
        for kind, pattern in _GIVEN:
            m = pattern.fullmatch(word)
            if m is None:
                continue
            value = m.group(1) or (argv[i + 1] if i + 1 < len(argv) and "=" not in word else "")
            if valid_seed(value):
                found[kind] = value
    return found


def asks_to_reproduce(text: str) -> bool:
    """Hypothesis's `@reproduce_failure(...)`: a decorator in the source, which no run-time setting applies."""
    return REPRODUCE_FAILURE.search(text) is not None


# The settings a run can be pinned by (`replay pin`, a capsule's "pin" member): the seeds above, the
# variables and limits of the run, each one's bounds. A value reaches an argv word, a variable or a
# container limit: never a shell, a Dockerfile or the image.
PIN_SETTINGS = (*KINDS, "GOMAXPROCS", "cpus", "clock")
_BOUNDS = {"GOMAXPROCS": (1, 1024), "cpus": (1, 256), "clock": (-10 * 366 * 86400, 10 * 366 * 86400),
           "jest": (-(2**31), 2**31 - 1)}  # jest draws its seed from -0x80000000 to 0x7fffffff


def setting_problem(name: str, value: str) -> str | None:
    """Why NAME=VALUE is not a setting replay applies (None: it is)."""
    if name not in PIN_SETTINGS:
        return f"unknown setting {name!r} (known: {', '.join(PIN_SETTINGS)})"
    if not valid_seed(value) or (value.startswith("-") and name not in ("jest", "clock")):
        return f"{name}: {value[:40]!r} is not an integer"
    low, high = _BOUNDS.get(name, (0, 10**40))
    if not low <= int(value) <= high:
        return f"{name}: {value} is out of range ({low} to {high})"
    return None
