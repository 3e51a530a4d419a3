"""The verdict of one attempt: its signature, the failed tests it names (and the JUnit reports
it wrote), where its output differs from the recorded one, its classification; and the attempt
as reported, scrubbed of secrets. The runner of attempts (replay/replayer.py) hands the engine's
result here."""
from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence

from .. import secretrules
from . import signature as sig
from .judge import Attempt, Expected, classify, fingerprint
from .sameness import difference
from .testsets import TestSet, cut_short, failing_tests, junit_tests


SUPPLIED = secretrules.SUPPLIED


def redacted(att: Attempt, secrets: Sequence[str]) -> Attempt:
    """An attempt as reported: a value supplied with --env never shows, even when the program
    printed it, and neither does what twin's secret rules catch (judged before, on what it
    really printed)."""
    stdout = att.stdout
    for s in secrets:
        stdout = stdout.replace(s.encode(), SUPPLIED.encode())
    return dataclasses.replace(att, output_tail=scrub(att.output_tail, secrets),
                               key_lines=tuple(scrub(k, secrets) for k in att.key_lines),
                               stdout=secretrules.scrub_bytes(stdout) if stdout else stdout,
                               tests=tuple(dataclasses.replace(t, failed=tuple(scrub(i, secrets) for i in t.failed))
                                           for t in att.tests),
                               differs=att.differs and dataclasses.replace(
                                   att.differs, recorded=att.differs.recorded and scrub(att.differs.recorded, secrets),
                                   here=att.differs.here and scrub(att.differs.here, secrets)))


def scrub(text: str, secrets: Sequence[str]) -> str:
    """Supplied values first (by value), then the rules (by shape)."""
    for s in secrets:
        text = text.replace(s, SUPPLIED)
    return secretrules.scrub(text)


def report_paths(workdir: str | None, reports: Sequence[str]) -> tuple[str, ...]:
    """Where in the attempt's container the JUnit reports the recorded run wrote are (capsule
    values, relative to its working directory): those that stay inside the working directory."""
    if not workdir:
        return ()
    paths = (posixpath.normpath(posixpath.join(workdir, p)) for p in reports if p and "\0" not in p)
    return tuple(dict.fromkeys(p for p in paths if p.startswith(workdir.rstrip("/") + "/")))


def attempt_of(output: bytes, stdout: bytes, exit_code: int | None, signal: str | None, duration_s: float,
               timed_out: bool, expected: Expected | None, reports: Sequence[bytes] = ()) -> Attempt:
    """An attempt as judged: its signature, the failed tests its output names (and the JUnit
    `reports` it wrote, those of Expected.reports read back from its container), where its
    output differs from the recorded one, and its classification."""
    text = output.decode("utf-8", "replace")
    # Docker reports a signal as 128+n; that is the recorded way only when a signal was recorded.
    by_signal = signal if (expected is None or expected.signal) else None
    code = None if by_signal else exit_code
    window = sig.output_tail(text)
    fs = sig.of_window(window, code, by_signal)
    tail = sig.last_lines(text, window)
    # Judged against a capsule, the failed tests decide only where twin's signature differs, and
    # only the frameworks it names: an exact reproduction costs what it did (scripts/bench_outcome.py).
    tests: tuple[TestSet, ...] = junit_tests(reports) if reports else ()
    if expected is None:
        tests = (*failing_tests(window), *tests)
    elif expected.tests and fs.signature != expected.signature:
        tests = (*failing_tests(window, {t.framework for t in expected.tests}), *tests)
    att = Attempt(code, by_signal, fs.signature, fs.key_lines, duration_s, timed_out, stdout, tail, tests=tests,
                  tests_cut=bool(tests) and cut_short(window))
    if expected is None:
        return att
    judged = dataclasses.replace(att, classification=classify(expected, att))
    # where the output differs: why a pass did not come back, or what a reproduced failure
    # printed otherwise (a failure of another kind shows both sides' key lines already)
    differs = difference(expected.failed, expected.key_lines, fs.key_lines, expected.stdout, stdout) \
        if not expected.failed or judged.classification == "recorded" else None
    return dataclasses.replace(judged, matched=fingerprint(expected, judged), differs=differs)
