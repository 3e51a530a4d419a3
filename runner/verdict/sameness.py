"""The parts of the one equivalence (judge.classify decides with them): outputs compared as
people compare them, and the failed tests compared as sets.

* Output, stdout or key lines, is compared line by line after the signature's rules
  (durations, times, temporary paths, ports, …) and without test frameworks' seeds, so
  `added 1 package in 805ms` and `… in 612ms` are the same line. Where they still differ,
  OutputDiff says where: the report's "stdout differs: line 3 …".
* Failed tests are compared per framework, on the frameworks both sides name. Along a
  history (`bisect --commits`, `--sweep`) fewer is the same: a test cannot fail before it
  exists, so a non-empty subset of the recorded failures, none outside them, is the failure.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from . import signature as sig
from .seeds import unseeded, unseeded_lines
from .testsets import TestSet

SHOWN_CHARS = 120  # of a differing line, in the report


@dataclass(frozen=True)
class OutputDiff:
    """Where an attempt's output first differs from the recorded one, both lines normalised."""

    stream: str  # "stdout" | "key lines"
    line: int  # 1-based: the attempt's stdout line, or the key line's position
    recorded: str | None  # None: the recorded output had no more lines
    here: str | None  # None: this attempt's output had no more lines

    def said(self) -> str:
        where = "stdout differs at line" if self.stream == "stdout" else "key lines differ at key line"
        return f"{where} {self.line}: recorded {_shown(self.recorded)}, here {_shown(self.here)}"


def _shown(line: str | None) -> str:
    if line is None:
        return "nothing more"
    return repr(line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…")


def numbered_lines(data: bytes) -> list[tuple[int, str]]:
    """Each line of a stream as any machine would print it, with its 1-based line number;
    runtime noise and lines left empty are skipped."""
    return [(n, unseeded(line)) for n, line in sig.numbered(data.decode("utf-8", "replace"))]


def stdout_difference(recorded: bytes, here: bytes) -> OutputDiff | None:
    """None when the two streams read the same once normalised (byte-equal ones at once)."""
    if recorded == here:
        return None
    want, got = numbered_lines(recorded), numbered_lines(here)
    for i in range(max(len(want), len(got))):
        w = want[i][1] if i < len(want) else None
        g = got[i][1] if i < len(got) else None
        if w != g:
            line = got[i][0] if i < len(got) else (got[-1][0] + 1 if got else 1)
            return OutputDiff("stdout", line, w, g)
    return None


def key_line_difference(recorded: Sequence[str], here: Sequence[str]) -> OutputDiff | None:
    want, got = unseeded_lines(recorded), unseeded_lines(here)
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else None
        g = got[i] if i < len(got) else None
        if w != g:
            return OutputDiff("key lines", i + 1, w, g)
    return None


def same_key_lines(recorded: Sequence[str], here: Sequence[str]) -> bool:
    """twin's key lines, compared without seeds and hints (the signature as people mean it)."""
    return len(recorded) == len(here) and unseeded_lines(recorded) == unseeded_lines(here)


def same_tests(recorded: Sequence[TestSet], here: Sequence[TestSet], fewer: bool = False,
               lower: bool = False, here_cut: bool = False) -> bool | None:
    """Whether the same tests failed, on the frameworks both sides name; None when there is
    nothing to compare (the recorded run names no failed test, or this one names none of its
    frameworks'), and the signature decides as before. `fewer`: along a history, a non-empty
    subset of the recorded failures counts. `lower`: the recorded tests come from a cut output
    tail, a lower bound: any test the recorded run could have failed counts (every recorded one
    and more, or, when this run's tail is cut too, the last of them; along a history, any failed
    test of their kind)."""
    mine = {s.framework: s.failed for s in here}
    common = [(s.failed, mine[s.framework]) for s in recorded if s.failed and s.framework in mine]
    if not common:
        return None
    if lower and fewer:
        return any(got for _, got in common) and all(_could_be(want, got) for want, got in common)
    if lower:
        # two cut tails of one failure show its last failed tests: the shorter list is within the longer
        return all(set(want) <= set(got) or (here_cut and set(got) <= set(want)) for want, got in common)
    if fewer:
        return any(got for _, got in common) and all(set(got) <= set(want) for want, got in common)
    return all(got == want for want, got in common)  # each sorted, without repeats (TestSet)


_TEST_PART = re.compile(r" |::| › | > ")  # what separates a test's name from its file or package, per framework


def _could_be(recorded: Sequence[str], got: Sequence[str]) -> bool:
    """Whether the tests failed here could be among a cut tail's: of the recorded ones' kind (a
    package that failed to build is not a test of it, where the recorded ones name tests)."""
    named = all(_TEST_PART.search(t) for t in recorded)
    return not named or all(t in recorded or _TEST_PART.search(t) for t in got)


def difference(failed: bool, recorded_key_lines: Sequence[str], key_lines: Sequence[str],
               recorded_stdout: bytes | None, stdout: bytes) -> OutputDiff | None:
    """What the report says differs: a failure's first differing key line, else stdout."""
    if failed and recorded_key_lines and tuple(recorded_key_lines) != tuple(key_lines):
        found = key_line_difference(recorded_key_lines, key_lines)
        if found is not None:
            return found
    return stdout_difference(recorded_stdout, stdout) if recorded_stdout is not None else None
