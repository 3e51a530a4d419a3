"""The report's human view on stdout: a few lines, and one closing sentence.

By default: the capsule, the steps in one line, the fidelity rows that could have changed the
outcome (one line counts the rest), one note for every variable recorded by name only, and the
verdict sentence last, whole (wrapped only between its clauses). `-v` / `--all` show every table:
the steps, the attempts, every fidelity row. Capsule strings are never read as rich markup.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..verdict.judge import Attempt, Expected, fingerprint
from ..build.plan import Fidelity
from .layout import View
from ..outcome.runreport import ReplayReport
from ..outcome.runreport import SHOWN

NAME_ONLY = "set (value not recorded)"  # the planner's "recorded" for a variable recorded by name only
SHOWN_NAMES = 8  # of those, named in the note (--all lists every one)


def show(report: ReplayReport, console: Any, show_all: bool = False) -> None:
    """The human view on stdout: short by default (the capsule, the steps in one line, what could have
    changed the outcome, the verdict sentence last); `show_all` (-v, --all): every table."""
    view = View(console)
    _capsule(report, view, show_all)
    _steps(report, view, show_all)
    base = report.baseline
    if base is not None:
        rate = f", {base.rate.failed}/{base.rate.runs} failed as recorded ({base.rate.span()})" if base.rate else ""
        _attempts(view, f"{base.before} (baseline): {base.verdict}{rate}", base.attempts, report.expected, show_all)
    _attempts(view, f"attempts {report.baseline.after}" if report.baseline is not None else "attempts", report.attempts,
              report.expected, show_all)
    if show_all:
        exp = report.expected
        view.line(f"recorded: {'fail' if exp.failed else 'pass'}"
                  + (f" exit {exp.exit_code}" if exp.exit_code is not None else "")
                  + (f" {exp.signal}" if exp.signal else "")
                  + (f", signature {exp.signature} ({exp.signature_source})" if exp.signature else ""))
    _show_key_lines(report, view)
    _fidelity(report.fidelity, view, show_all)
    if report.drift:
        view.line(f"drifted packages ({len(report.drift)}): " + ", ".join(
            f"{d.name} {d.installed}→{d.recorded}" for d in report.drift[:20]))
    if report.http is not None:
        for line in report.http.lines():
            view.line(line)
    for note in report.notes:
        view.line(f"note: {note}")
    _why(report, view, show_all)
    view.sentence(report.summary, "bold")


def _capsule(report: ReplayReport, view: View, show_all: bool) -> None:
    """The capsule, and its verification on the same line when there is nothing more to say of it."""
    c, v = report.capsule, report.verification
    head = f"{c.format} capsule {c.path} ({c.id})"
    if not show_all and v.valid and not v.problems and not v.unbound:
        view.line(f"{head}: valid" + (f", sealed, {_TRUST[v.trusted]}" if v.sealed else ""))
        return
    view.line(head)
    _verification(report, view)


_TRUST = {True: "trusted signer", False: "signer NOT trusted", None: "signer not checked"}


def _why(report: ReplayReport, view: View, show_all: bool) -> None:
    """The causes by score, the first five (--all: every one), each with its evidence and what to try next."""
    if not report.why:
        return
    view.line("why, by the evidence (highest score first):")
    shown = report.why if show_all else report.why[:SHOWN]
    for i, cause in enumerate(shown, 1):
        view.line(f"  {i}. {cause.fact} (score {cause.score}): {cause.evidence}")
        view.line(f"     try: {cause.next}", wrap=False)
    if len(report.why) > len(shown):
        view.line(f"  and {len(report.why) - len(shown)} more (--all lists them; --json has each with its score)")


def _verification(report: ReplayReport, view: View) -> None:
    v = report.verification
    trust = _TRUST[v.trusted]
    state = "valid" if v.valid else (
        "INVALID, replayed anyway (--allow-unverified)" if v.valid is False else "not verified")
    unbound = f"; applied though the seal does not bind them: {', '.join(v.unbound)}" if v.unbound else ""
    view.line(f"verification: {state}" + (f", sealed, {trust}" if v.sealed else "") + unbound)
    for p in v.problems[:10]:
        view.line(f"  {p}")


def _steps(report: ReplayReport, view: View, show_all: bool) -> None:
    if show_all:
        view.table("steps", ("step", "time"), [(s.name, f"{s.seconds:.1f}s") for s in report.steps])
        return
    tried = [s for s in report.steps if "attempt" in s.name]
    before = [s for s in report.steps if s not in tried]
    slow = max(before, key=lambda s: s.seconds, default=None)
    view.line(f"steps: {sum(s.seconds for s in before):.1f}s to the image"
              + (f" (slowest: {slow.name} {slow.seconds:.1f}s)" if slow else "")
              + (f", {sum(s.seconds for s in tried):.1f}s of attempts" if tried else ""))


def _attempts(view: View, title: str, attempts: Sequence[Attempt], expected: Expected, show_all: bool) -> None:
    """Every attempt's row with `show_all`; by default the verdict sentence counts them, and only where
    an attempt's output first differs from the recorded one is said (once per different place)."""
    if show_all:  # the fingerprint that matched: the signature, or the failed tests where they decided
        rows = [(str(i), a.signal or ("timeout" if a.timed_out else str(a.exit_code)), fingerprint(expected, a),
                 a.classification + (" (output differs)" if a.differs and a.classification == "recorded" else ""),
                 f"{a.duration_s:.1f}s") for i, a in enumerate(attempts, 1)]
        view.table(title, ("#", "exit", "fingerprint", "as recorded?", "time"), rows)
    elif "(baseline)" in title:  # a fix check: the unpatched run's rate in one line (the sentence compares)
        view.line(title)
    said: set[str] = set()
    for i, a in enumerate(attempts, 1):
        if a.differs is not None and a.classification != "pass" and (line := a.differs.said()) not in said:
            said.add(line)
            view.line(f"attempt {i}: {line}")


def could_change_outcome(f: Fidelity) -> bool:
    """A fact replayed other than recorded that could have changed the outcome: not an exact one, not
    one the command does not use, not a host-specific value (mapped to the container's on purpose),
    not one the capsule has no value of (nothing recorded to differ from)."""
    return (f.status in ("approximated", "not applied") and f.recorded not in ("not recorded", NAME_ONLY)
            and not f.why.startswith("host-specific"))


def _fidelity(rows: Sequence[Fidelity], view: View, show_all: bool) -> None:
    name_only = [f for f in rows if f.recorded == NAME_ONLY and f.fact.startswith("env ")]
    exact = [f for f in rows if f.status == "exact"]
    # a seed or a pin applied is shown too: the run no longer draws what the recorded run drew
    applied = [f for f in rows if f.fact == "seed" or f.fact.startswith("pin ")]
    listed = list(rows) if show_all else [f for f in rows if (could_change_outcome(f) or f in applied)
                                          and f not in name_only]
    if listed:
        view.table("fidelity" + ("" if show_all else ": what was not replayed exactly and could change the outcome"
                                 + (", and the seeds and pin applied" if applied else "")),
                   ("fact", "recorded", "replayed", "status", "why"),
                   [(f.fact, f.recorded, f.replayed, f.status, f.why) for f in listed], free=4)
    if show_all:
        return
    rest = len(rows) - len(exact) - len(listed) - len(name_only)
    view.line(f"{len(exact)} of {len(rows)} facts replayed exactly"
              + (f"; {rest} more could not change the outcome" if rest else "")
              + (" (-v lists them)" if exact or rest else ""))
    if name_only:
        names = [f.fact.removeprefix("env ") for f in name_only]
        shown = ", ".join(names[:SHOWN_NAMES]) + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES
                                                  else "")
        view.line(f"note: {len(name_only)} variable(s) {NAME_ONLY}, left unset: {shown} "
                  "(supply one with --env NAME=VALUE)")


def _show_key_lines(report: ReplayReport, view: View) -> None:
    exp = report.expected
    # a reproduced attempt whose key lines differ says where in one line (_attempts)
    differing = [a for a in report.attempts if a.key_lines != exp.key_lines and a.classification not in ("pass", "recorded")]
    if not differing or not exp.failed:
        return
    view.line("key lines in the capsule:")
    for line in exp.key_lines:
        view.line(f"  {line}")
    view.line("key lines here:")
    for line in differing[0].key_lines:
        view.line(f"  {line}")
