"""JUnit XML for CI: a farm night, one `replay` run, one `replay bisect`.

What the readers take (../shared/FARM-NOTES.md): dorny/test-reporter and GitLab read
testcase classname/name/time and <failure>/<error>/<skipped> (message, type, text);
mikepenz/action-junit-report also shows <flakyFailure> as retries; GitLab keeps the first
of duplicate names. So: one <testcase> per capsule named by its path (stable across
nights), short one-line messages, the key lines in the element text. The output is valid
against Maven Surefire's surefire-test-report-3.0.xsd, the schema that knows flakyFailure:
its element order (failure, flakyFailure, skipped, error, system-out) and its time format
(at most three decimals) are why the writer looks the way it does.

Every string here may come from a capsule (paths, signatures, key lines): ElementTree
escapes markup, and characters XML 1.0 cannot carry at all (NUL, ESC...) are written as
visible escapes instead of making the file unreadable.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ..verdict.vocabulary import FACTS, JunitOutcome
from ..farm.records import CapsuleResult, Night

if TYPE_CHECKING:  # the report and bisect pull in the whole replay core; the farm's JUnit needs none of it
    from ..bisect import BisectResult, CommitsResult, SweepResult
    from ..outcome.runreport import ReplayReport

    BisectOutcome = BisectResult | CommitsResult | SweepResult

Outcome = JunitOutcome

# A reproducing failure is a red test: the bug is still there. A failure that no longer
# comes back, or is fixed at --ref, is green with a note; a capsule that cannot be
# replayed (or an engine that failed) is an error, never a verdict (runner/verdict/vocabulary.py's table).
OUTCOME: Mapping[str, Outcome] = {verdict: facts.junit for verdict, facts in FACTS.items()}
MESSAGE_CHARS = 200  # one line in a check-run summary (dorny caps the whole at 65,535 bytes)
TEXT_LINES, LINE_CHARS = 40, 500
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


class AttemptLike(Protocol):
    """What both a farm AttemptRecord and a replay Attempt carry (read-only: both are frozen)."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def signal(self) -> str | None: ...
    @property
    def signature(self) -> str | None: ...
    @property
    def classification(self) -> str | None: ...
    @property
    def duration_s(self) -> float | None: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def key_lines(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Flake:
    message: str
    text: str


@dataclass(frozen=True)
class Case:
    """One <testcase>, before it is XML."""

    name: str
    classname: str
    time: float
    outcome: Outcome
    kind: str = ""  # the type attribute: the verdict or status
    message: str = ""
    text: str = ""
    flakes: tuple[Flake, ...] = ()
    out: str = ""  # <system-out>


# --- the farm -----------------------------------------------------------------------------

def farm_junit(night: Night) -> str:
    """One <testsuite> for the night, one <testcase> per capsule."""
    cases = [_farm_case(r, night.ref) for r in night.results]
    props = {"night.id": night.id, "night.started_at": night.started_at,
             "night.finished_at": night.finished_at or "", "ref": night.ref or "",
             "sources": " ".join(night.sources),
             "replay.version": next((r.replay_version for r in night.results if r.replay_version), "")}
    wall = _wall_seconds(night.started_at, night.finished_at)
    return _suite("replay farm", cases, props, wall if wall is not None else sum(c.time for c in cases))


def _farm_case(r: CapsuleResult, ref: str | None) -> Case:
    outcome = OUTCOME.get(r.verdict, "error")
    recorded = [a for a in r.attempts if a.side == "recorded"]
    k, n = (r.rate.failed, r.rate.runs) if r.rate else (_reproduced(recorded), len(recorded))
    notes = _farm_notes(r, ref or r.ref, k, n)
    if recorded_pass(r):
        outcome = "pass"  # a recorded pass that passes again: nothing is broken
        notes = f"a recorded pass that passes again\n{notes}"
    elif r.ref_verdict == "fixed" and outcome == "failure":
        outcome = "pass"  # "fixed on main?" is the question a CI job asks with --ref
        notes = f"fixed at {ref or r.ref or 'REF'}: passes there, {r.verdict} at its recorded commit\n{notes}"
    base = Case(r.path, r.repo or r.format, r.duration_s, outcome, r.verdict, out=notes)
    if outcome == "failure":
        return replace(base, message=_farm_message(r, k, n), text=_lines(r.key_lines))
    if outcome in ("error", "skipped"):
        return replace(base, message=f"{r.verdict}: {r.reason or 'no reason recorded'}",
                        text=_lines((r.reason, *r.key_lines)))
    if r.verdict == "flaky":
        return replace(base, flakes=_flakes([(a.index, a) for a in recorded], k, n, r.key_lines))
    return base


def recorded_pass(r: CapsuleResult) -> bool:
    """A capsule that recorded a pass and passed again: "reproduced", with nothing broken.
    (The model keeps no recorded exit code: a reproduced exit 0 with no recorded failure
    signature can only be a recorded pass.)"""
    return r.verdict == "reproduced" and r.exit_code == 0 and r.recorded_signature is None


def _farm_message(r: CapsuleResult, k: int, n: int) -> str:
    seen = r.signature or "no signature"
    if r.verdict == "different-failure":
        return f"different failure: {seen}, recorded {r.recorded_signature or 'none'}"
    return f"{r.verdict}: {seen}" + (f" ({k}/{n} attempts)" if n else "")


def _farm_notes(r: CapsuleResult, ref: str | None, k: int, n: int) -> str:
    notes = [f"verdict: {r.verdict}" + (f": {r.reason}" if r.reason else ""),
             f"capsule {r.capsule_id} ({r.format}) at commit {r.commit or 'not recorded'}"]
    if n:
        notes.append(f"reproduced {k}/{n} attempts" + (f": {r.rate.phrase()}" if r.rate else ""))
    if r.verdict == "not-reproduced":
        notes.append("the recorded failure did not come back at its commit: "
                     "the environment changed or the capsule is stale")
    if r.signature or r.recorded_signature:
        notes.append(f"signature here {r.signature or 'none'}, recorded {r.recorded_signature or 'none'}")
    if r.ref_verdict:
        notes.append(f"at {ref or 'REF'}: {r.ref_verdict}")
    notes.extend(_attempt_line(a.index, a, (ref or "REF") if a.side == "ref" else "the recorded commit")
                 for a in r.attempts)
    if r.image_digest:
        notes.append(f"image {r.image_digest}")
    also = getattr(r, "also_at", ())  # the store's addition to the model (the farm branch)
    if also:
        notes.append("also collected at " + ", ".join(also))
    return "\n".join(notes)


# --- one replay ---------------------------------------------------------------------------

def replay_junit(report: ReplayReport) -> str:
    """`replay --junit FILE`: one testcase from a runner.report.ReplayReport."""
    return _suite("replay", [_replay_case(report)])


def _replay_case(report: ReplayReport) -> Case:
    attempts = list(enumerate(report.attempts, 1))
    k, n = _reproduced(report.attempts), len(report.attempts)
    outcome = OUTCOME.get(report.verdict, "error")
    if report.verdict == "reproduced" and not report.expected.failed:
        outcome = "pass"
    c = report.capsule
    time = sum(s.seconds for s in report.steps) or sum(a.duration_s for a in report.attempts)
    base = Case(c.path, c.format, time, outcome, report.verdict, out=_replay_notes(report, k, n))
    if outcome == "failure":
        wanted = "recorded" if report.verdict == "reproduced" else "other"
        first = next((a for a in report.attempts if a.classification == wanted), None)
        seen = first.signature if first else "no signature"
        message = (f"different failure: {seen}, recorded {report.expected.signature or 'none'}"
                   if report.verdict == "different-failure" else f"{report.verdict}: {seen} ({k}/{n} attempts)")
        return replace(base, message=message, text=_lines(first.key_lines if first else ()))
    if outcome == "skipped":
        return replace(base, message=f"{report.verdict}: no attempt decided ({n} attempts)")
    if report.verdict == "flaky":
        return replace(base, flakes=_flakes(attempts, k, n, report.expected.key_lines))
    return base


def _replay_notes(report: ReplayReport, k: int, n: int) -> str:
    exp = report.expected
    end = f"exit {exp.exit_code}" if exp.exit_code is not None else (exp.signal or "no exit code")
    notes = [f"verdict: {report.verdict}", f"capsule {report.capsule.id} ({report.capsule.format})",
             f"recorded: {'fail' if exp.failed else 'pass'}, {end}, signature {exp.signature or 'none'}",
             f"reproduced {k}/{n} attempts"]
    notes.extend(_attempt_line(i, a) for i, a in enumerate(report.attempts, 1))
    notes.extend(f"note: {note}" for note in report.notes)
    return "\n".join(notes)


# --- one bisect ---------------------------------------------------------------------------

def bisect_junit(result: BisectOutcome, bad_path: str) -> str:
    """`replay bisect --junit FILE`: one testcase for BAD, the answer in its message, from
    the typed result of any mode (facts, --commits, --sweep)."""
    from ..bisect import BisectResult, CommitsResult  # the bisect stage pulls in the replay core

    mode = "facts" if isinstance(result, BisectResult) else "commits" if isinstance(result, CommitsResult) else "sweep"
    ran = result if isinstance(result, BisectResult) else result.walk  # status, trials, notes
    status, runs = ran.status, ran.trials
    time = sum(t.build_s + t.run_s for t in runs)
    spent = sum(len(t.attempts) for t in runs)
    notes = "\n".join([f"bisect by {mode}: {status}, {len(runs)} trials, {spent} runs; confidence "
                       f"{ran.confidence:.2f} (asked {ran.target:g})", *(f"note: {x}" for x in ran.notes)])
    base = Case(bad_path, f"replay bisect {mode}", time, "pass", status, out=notes)
    if status in ("found", "undecided"):  # the failure reproduces: a red test, with the answer or the candidates
        message, text = _bisect_answer(result)
        return _suite("replay bisect", [replace(base, outcome="failure", message=message, text=text)])
    if status == "no culprit" and isinstance(result, BisectResult):
        not_varied = [f"not varied: {x.key}: {x.reason}" for x in result.not_varied]
        return _suite("replay bisect", [replace(
            base, outcome="failure", message="no culprit: no set of the varied facts fails the recorded way",
            text=_lines(not_varied))])
    if status == "not-reproduced":  # BAD does not fail here: as `replay`'s not-reproduced, a pass
        return _suite("replay bisect", [base])
    return _suite("replay bisect", [replace(base, outcome="error", message=f"{status}: cannot bisect")])


def _bisect_answer(result: BisectOutcome) -> tuple[str, str]:
    from ..bisect import BisectResult, CommitsResult, candidates_said, summary

    if isinstance(result, CommitsResult):
        chances = _lines([f"{c.item} {c.probability:.4f}" for c in result.walk.candidates])
        first = result.first_failing
        if first is None:
            return f"undecided, {candidates_said(result.walk, lambda sha: sha[:12])}", chances
        return (f"first failing commit: {first.sha[:12]} {first.subject} (probability "
                f"{result.walk.confidence:.2f})", _lines([f"{first.sha} {first.subject}"]))
    if not isinstance(result, BisectResult):
        return summary(result), ""
    cands = {c.key: c for c in result.candidates}
    text = [f"{k}: {cands[k].good if k in cands else None} -> {cands[k].bad if k in cands else None}"
            for k in result.minimal]
    text += [f"without {r.key}: {r.failed}/{r.runs} runs failed as recorded (luck {r.luck:.4f})"
             for r in result.removals]
    head = "minimal set" if result.found else "undecided, so far"
    return f"{head}: {', '.join(result.minimal)} (confidence {result.confidence:.2f})", _lines(text)


# --- shared -------------------------------------------------------------------------------

def _reproduced(attempts: Iterable[AttemptLike]) -> int:
    return sum(1 for a in attempts if a.classification == "recorded")


def _failed(a: AttemptLike) -> bool:
    """The program failed (or did not do as recorded): what a flakyFailure stands for."""
    return bool(a.timed_out or a.signal or (a.exit_code not in (0, None)) or a.classification == "other")


def _flakes(attempts: Sequence[tuple[int, AttemptLike]], k: int, n: int, key_lines: Sequence[str]) -> tuple[Flake, ...]:
    flakes = tuple(Flake(f"attempt {i}: {_end(a)} {a.signature or 'no signature'} ({a.classification}), "
                         f"reproduced {k}/{n}", _lines(a.key_lines)) for i, a in attempts if _failed(a))
    # A flaky verdict with no attempts on record still says so, in the form readers show.
    return flakes or (Flake(f"flaky: reproduced {k}/{n}", _lines(key_lines)),)


def _end(a: AttemptLike) -> str:
    return "timeout" if a.timed_out else (a.signal or f"exit {a.exit_code}")


def _attempt_line(index: int, a: AttemptLike, side: str = "") -> str:
    secs = f", {a.duration_s:.1f}s" if a.duration_s is not None else ""
    return (f"attempt {index}{' at ' + side if side else ''}: {_end(a)}, "
            f"{a.signature or 'no signature'}, {a.classification or 'not judged'}{secs}")


def _wall_seconds(start: str, end: str | None) -> float | None:
    """The night's wall time, when both ends parse (RFC 3339); None otherwise."""
    if not end:
        return None
    try:
        return max(0.0, datetime.fromisoformat(end).timestamp() - datetime.fromisoformat(start).timestamp())
    except ValueError:
        return None


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _short(text: str) -> str:
    one = " ".join(_xml(text).split())
    return one if len(one) <= MESSAGE_CHARS else one[:MESSAGE_CHARS - 1] + "…"


def _lines(lines: Iterable[str]) -> str:
    out = [_xml(part)[:LINE_CHARS] for line in lines for part in line.splitlines() if part]
    more = len(out) - TEXT_LINES
    return "\n".join(out[:TEXT_LINES] + ([f"... {more} more lines"] if more > 0 else []))


def _secs(seconds: float) -> str:
    return f"{max(0.0, seconds):.3f}"


def _suite(name: str, cases: Sequence[Case], props: Mapping[str, str] | None = None,
           time: float | None = None) -> str:
    counts = {o: sum(1 for c in cases if c.outcome == o) for o in ("failure", "error", "skipped")}
    suite = ET.Element("testsuite", {
        "name": name, "time": _secs(sum(c.time for c in cases) if time is None else time),
        "tests": str(len(cases)), "failures": str(counts["failure"]),
        "errors": str(counts["error"]), "skipped": str(counts["skipped"])})
    if props:
        holder = ET.SubElement(suite, "properties")
        for key, value in props.items():
            ET.SubElement(holder, "property", {"name": key, "value": _xml(value)})
    for case in cases:
        _testcase(suite, case)
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, case: Case) -> None:
    el = ET.SubElement(suite, "testcase", {"name": _xml(case.name), "classname": _xml(case.classname),
                                           "time": _secs(case.time)})
    kind = _xml(case.kind)
    if case.outcome == "failure":  # the schema's order: failure, flakyFailure, skipped, error
        ET.SubElement(el, "failure", {"message": _short(case.message), "type": kind}).text = case.text or None
    for flake in case.flakes:
        f = ET.SubElement(el, "flakyFailure", {"message": _short(flake.message), "type": kind})
        ET.SubElement(f, "stackTrace").text = flake.text  # required by the schema, empty allowed
    if case.outcome == "skipped":
        ET.SubElement(el, "skipped", {"message": _short(case.message)})
    if case.outcome == "error":
        ET.SubElement(el, "error", {"message": _short(case.message), "type": kind}).text = case.text or None
    if case.out:
        ET.SubElement(el, "system-out").text = _xml(case.out)
