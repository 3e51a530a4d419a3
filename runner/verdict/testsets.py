"""Which tests failed, wherever a run's output names them: one small parser per framework.

A failure is "the same" as people mean it when the same tests fail, however the output is
laid out (a summary cut short without CI, colours, another reporter, other durations). So
each parser reads only the lines that name a failed test, in the form its framework prints
them, and says why it trusts that form. Ids are normalised by the signature's line rules
(absolute paths, durations, …) and without seeds, so a test's id is the same on any machine.

The text given is the window the signature reads (signature.output_tail): the recorded side
often has only that (a twin capsule's outputTail), so the attempt's side is read the same
way. Every parser is a single pass over at most 200 lines, and runs only when its
framework's marker is in the text, so a tail costs little more than its signature.
JUnit XML files a run wrote are read by junit_tests (a real XML parser, defusedxml).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from . import signature as sig
from .seeds import unseeded

MAX_TESTS = 2000  # ids kept per framework: a hostile output cannot make a set unbounded


@dataclass(frozen=True)
class TestSet:
    """The failed tests one framework named, sorted, each id normalised."""

    __test__ = False  # pytest: not a test class, although its name begins with Test

    framework: str  # pytest | jest | vitest | mocha | node | go | junit
    failed: tuple[str, ...]


CUT_TAIL_NOTE = ("the recorded failed tests come from a cut output tail (twin keeps the last 200 lines): a lower bound; "
                 "a run that fails them and more, or along a history any of the tests the tail may have cut, fails "
                 "as recorded")


def cut_short(window: str) -> bool:
    """Whether an output window may be the tail of a longer output: it holds as many lines, or
    as many characters, as twin keeps (signature.output_tail). The failed tests it names are
    then a lower bound: the ones before the tail were cut with it."""
    body = window[:-1] if window.endswith("\n") else window
    return len(window) >= sig.TAIL_CHARS or body.count("\n") + 1 >= sig.TAIL_LINES


class Window:
    """The output a parser reads: `raw` as printed, `text` without colour codes and `lines`
    (each a redrawn line's last state, trailing blanks gone), both made once, when a parser
    first needs them."""

    def __init__(self, raw: str) -> None:
        self.raw = raw

    @cached_property
    def text(self) -> str:
        return sig.strip_ansi(self.raw) if "\x1b" in self.raw else self.raw

    @cached_property
    def lines(self) -> list[str]:
        lines = self.text.split("\n")
        if "\r" in self.text:
            lines = [line[line.rfind("\r") + 1:] for line in lines]
        return [line.rstrip() for line in lines]

    def lines_with(self, *words: str) -> list[str]:
        """The lines holding one of the words, found in the raw output (a C-speed search), each
        cleaned alone: a parser that needs a few lines of a long window does not clean it all."""
        raw, starts = self.raw, set()
        for word in words:
            i = raw.find(word)
            while i >= 0:  # one look back per line, then on from its end: linear in the window
                starts.add(raw.rfind("\n", 0, i) + 1)
                end = raw.find("\n", i)
                i = raw.find(word, end) if end >= 0 else -1
        out = []
        for start in sorted(starts):
            end = raw.find("\n", start)
            line = raw[start:end if end >= 0 else len(raw)]
            if "\x1b" in line:
                line = sig.strip_ansi(line)
            out.append(line[line.rfind("\r") + 1:].rstrip())
        return out


# --- pytest --------------------------------------------------------------------------

# A node id: a .py path, then ::names and a [parametrisation] that may hold blanks. pytest
# never trims the id itself, only the " - message" after it (to the terminal's width, unless
# CI is set or -vv), so the id is whole in both forms.
_PY_ID = r"(?P<id>[^\s:]+\.py(?:::[^\s\[]+(?:\[[^\n]*?\])?)?)"
# "FAILED id - msg" / "ERROR id - msg", the short summary (-rA too), at a line's start. The
# pattern begins with its word, so the regex engine jumps to each occurrence; the look-behind
# after it checks the line's start: a summary of 42 failures costs 42 matches in C.
_PY_SUMMARY = tuple((word, re.compile(rf"{word}(?<=(?<![^\n]){word}) {_PY_ID}(?= - |[ \t]*(?:\n|\Z))"))
                    for word in ("FAILED", "ERROR"))
# "id FAILED [ 50%]" (-v, one line per test as it runs), pytest-xdist's "[gw0] [ 50%] FAILED id"
_PY_VERBOSE = re.compile(rf"{_PY_ID} (?:FAILED|ERROR)(?: +\[ *\d+%\])?$")
_PY_XDIST = re.compile(rf"\[gw\d+\] (?:\[ *\d+%\] )?(?:FAILED|ERROR) {_PY_ID}")


def pytest_failed(w: Window) -> list[str]:
    """pytest's short summary (`FAILED path::test - msg`, `ERROR …`), on by default since
    pytest 6; without one (-rN), -v's per-test lines. The node id is never cut short."""
    raw = w.raw
    if ".py" not in raw or ("FAILED" not in raw and "ERROR" not in raw):
        return []
    # --color=yes colours the word and the id: then the text is read without colour codes
    text = w.text if "mFAILED" in raw or "mERROR" in raw else raw
    out = [test for word, r in _PY_SUMMARY if f"{word} " in text for test in r.findall(text)]
    if out:
        return out
    for line in w.lines_with("FAILED", "ERROR"):
        if line.startswith("[gw"):
            found = _PY_XDIST.match(line)
        elif line.endswith(("FAILED", "ERROR", "%]")) and ".py" in line:
            found = _PY_VERBOSE.match(line)
        else:
            continue
        if found:
            out.append(found.group("id"))
    return out


# --- jest ----------------------------------------------------------------------------

_JEST_FILE = re.compile(r"FAIL (\S+)(?: \([\d.]+ m?s\))?$")
_JEST_NOT_TESTS = ("Console", "Test suite failed to run")


def jest_failed(w: Window) -> list[str]:
    """jest: `FAIL path` opens a file's report, `  ● describe › test` heads each failed test
    in it (`● Test suite failed to run`: the file itself). Warnings (`● Validation Warning:`)
    come outside a FAIL block or end with a colon."""
    out: list[str] = []
    current: str | None = None
    if "● " not in w.raw or "FAIL" not in w.raw:
        return out
    for line in w.lines:
        if line.startswith(("FAIL ", "PASS ")):
            m = _JEST_FILE.match(line)
            current = m.group(1) if m else None
            continue
        name = line.strip()
        if current is None or not name.startswith("● "):
            continue
        name = name[2:].strip()
        if name == "Test suite failed to run":
            out.append(current)
        elif name and name not in _JEST_NOT_TESTS and not name.endswith(":"):
            out.append(f"{current} › {name}")
    return out


# --- vitest --------------------------------------------------------------------------

def vitest_failed(w: Window) -> list[str]:
    """vitest's "Failed Tests" section: ` FAIL  file > describe > test` for each failed test,
    and ` FAIL  file [ file ]` for a file that failed to load (its "Failed Suites")."""
    out: list[str] = []
    if "FAIL" not in w.raw:
        return out
    for line in w.lines:
        if not line.startswith(" FAIL  "):
            continue
        rest = line[7:].strip()
        if " > " in rest:
            out.append(rest)
        elif rest.endswith(" ]") and " [ " in rest:
            out.append(rest.split(" [ ", 1)[0])
    return out


# --- mocha ---------------------------------------------------------------------------

_MOCHA_FAILING = re.compile(r" *\d+ failing")
_MOCHA_ITEM = re.compile(r"  \d+\) (.+)$")


def mocha_failed(w: Window) -> list[str]:
    """mocha's spec reporter: after `N failing`, each failure is `  1) suite` and its title
    path on the lines below, one more indent each, the last ending with a colon."""
    out: list[str] = []
    started = False
    path: list[str] | None = None
    if " failing" not in w.raw:
        return out
    for line in w.lines:
        if not started:
            started = bool(_MOCHA_FAILING.match(line))
            continue
        if path is not None:
            if not line.strip():  # a blank line before the title path ended: malformed, drop it
                path = None
                continue
            path.append(line.strip())
            if line.endswith(":"):
                out.append(" > ".join(path)[:-1])
                path = None
            continue
        if m := _MOCHA_ITEM.match(line):
            title = m.group(1)
            if title.endswith(":"):
                out.append(title[:-1])
            else:
                path = [title]
    return out


# --- node's test runner ----------------------------------------------------------------

_NODE_SPEC = re.compile(r"( *)✖ (.+?)(?: \([\d.]+m?s\))?( # (?:TODO|SKIP)\b.*)?$")
_NODE_SUITE = re.compile(r" *▶ (.+?)(?: \([\d.]+m?s\))?$")
_NODE_TAP = re.compile(r" *not ok \d+ - (.*?)(?: # (TODO|SKIP)\b.*)?$")


def node_failed(w: Window) -> list[str]:
    """node --test: the TAP reporter (Node's default without a terminal before 23) or the spec
    reporter (its default on a terminal). Both name a test by its own name: TAP's
    `not ok 2 - name` (a suite's own `not ok` says failureType 'subtestsFailed'), spec's
    `✖ name (1.2ms)` (a suite was opened by `▶ name`, maybe before the window; so the
    `✖ failing tests:` list at its end, which holds only tests, is read when it is there).
    A TODO test's failure is not a failure."""
    out: list[str] = []
    suites: set[str] = set()
    pending: str | None = None  # a TAP `not ok` until its YAML block says what kind
    if "✖ " not in w.raw and "not ok " not in w.raw:
        return out
    lines: Sequence[str] = w.lines
    if "✖ failing tests:" in lines:  # the spec list: every failed test, none of the suites
        lines = lines[lines.index("✖ failing tests:") + 1:]
    for line in lines:
        if pending is not None and "failureType:" in line:
            if "subtestsFailed" not in line:
                out.append(pending)
            pending = None
        if "not ok " in line and (m := _NODE_TAP.match(line)):
            if pending is not None:
                out.append(pending)
            pending = None if m.group(2) else m.group(1)
        elif "▶ " in line and (s := _NODE_SUITE.match(line)):
            suites.add(s.group(1))
        elif "✖ " in line and (m := _NODE_SPEC.match(line)) and not m.group(3):
            name = m.group(2)
            if name != "failing tests:" and name not in suites:
                out.append(name)
    if pending is not None:
        out.append(pending)
    return out


# --- go test -------------------------------------------------------------------------

_GO_TEST = re.compile(r" *--- FAIL: (\S+) \(")
_GO_PACKAGE = re.compile(r"FAIL\s+(\S+)(?:\s+[\d.]+s|\s+\[[^\]]+\])\s*$")


def go_failed(w: Window) -> list[str]:
    """go test: `--- FAIL: TestX (0.00s)` (subtests `TestX/case`, indented), then the
    package's `FAIL <tab> import/path <tab> 0.01s` (or `[build failed]`), which names the
    package of the tests above it. A package that failed without a failed test is named alone."""
    out: list[str] = []
    tests: list[str] = []
    if "--- FAIL: " not in w.raw and "FAIL\t" not in w.raw:
        return out
    for line in w.lines:
        if line.startswith(" ") or line.startswith("---"):
            if m := _GO_TEST.match(line):
                tests.append(m.group(1))
        elif line.startswith("FAIL") and (p := _GO_PACKAGE.match(line)):
            out += [f"{p.group(1)} {t}" for t in tests] if tests else [p.group(1)]
            tests = []
    return out + tests  # tests whose package line is past the window


# --- all of them ---------------------------------------------------------------------

Parser = Callable[[Window], list[str]]
# Each parser first looks for its framework's marker in the raw output (a substring every
# output naming a failed test holds) and returns at once without it.
PARSERS: tuple[tuple[str, Parser], ...] = (
    ("pytest", pytest_failed), ("jest", jest_failed), ("vitest", vitest_failed), ("mocha", mocha_failed),
    ("node", node_failed), ("go", go_failed),
)


def _may_vary(test: str) -> bool:
    """Whether an id holds what differs between machines (an absolute path, a local port):
    runners print ids relative to the project, so most hold none and are kept as printed."""
    return (test[:1] in ("/", "~", "\\") or "\n/" in test or "~/" in test or " /" in test or "[/" in test or "(/" in test or "=/" in test
            or ":\\" in test or "localhost:" in test or "127.0.0.1:" in test)


def test_id(raw: str) -> str:
    """An id as it would read on any machine (paths, ports, … by the signature's rules)."""
    return unseeded(sig.normalize_line(raw)) if _may_vary(raw) else raw.strip()


def test_set(framework: str, ids: Iterable[str]) -> TestSet | None:
    unique = set(ids)
    if _may_vary("\n".join(unique)):  # most runs print no id that does: checked once for all
        unique = {test_id(i) for i in unique}
    unique.discard("")
    found = sorted(unique)
    return TestSet(framework, tuple(found[:MAX_TESTS])) if found else None


def failing_tests(window: str, frameworks: Collection[str] | None = None) -> tuple[TestSet, ...]:
    """The failed tests each framework names in an output window (signature.output_tail);
    only those of `frameworks` when given (the ones the recorded run named)."""
    w = Window(window)
    out = []
    for name, parse in PARSERS:
        if frameworks is None or name in frameworks:
            found = test_set(name, parse(w))
            if found is not None:
                out.append(found)
    return tuple(out)


# --- JUnit XML -----------------------------------------------------------------------

MAX_REPORT_BYTES = 16 * 1024 * 1024  # a report past this is not read (it is someone else's file)


def junit_failed(xml: bytes) -> list[str] | None:
    """The failed testcases of a JUnit XML report (pytest --junitxml, jest-junit, vitest's and
    node's junit reporters, mocha's xunit, Maven Surefire): a `<testcase>` with a `<failure>`
    or `<error>` child; `<skipped>`, and Surefire's `<flakyFailure>`/`<rerunFailure>` of a test
    that passed on a rerun, are not failures. None: not a JUnit report (or not XML at all).
    defusedxml refuses entity expansion and external references: the file is the command's."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    if len(xml) > MAX_REPORT_BYTES:
        return None
    try:
        root = fromstring(xml)
    except (ParseError, DefusedXmlException, ValueError):
        return None
    if root.tag not in ("testsuites", "testsuite"):
        return None
    out = []
    for case in root.iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        if not failed or case.find("skipped") is not None:  # node's reporter: a TODO test fails, skipped
            continue
        name, classname = (case.get("name") or "").strip(), (case.get("classname") or "").strip()
        out.append(f"{classname}::{name}" if classname and classname != name else name)
    return out


def junit_tests(reports: Iterable[bytes]) -> tuple[TestSet, ...]:
    """The failed tests of the JUnit reports a run wrote, as one set (none failed: no set, and
    the signature decides, as for an output that names no failed test)."""
    ids = [i for xml in reports for i in junit_failed(xml) or ()]
    found = test_set("junit", ids)
    return (found,) if found is not None else ()
