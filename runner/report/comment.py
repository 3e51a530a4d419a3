"""The pull-request comment: one Markdown comment per capsule, replayed at the PR's head.

`replay CAPSULE --ref SHA --comment FILE` writes it; the PR job posts it. A hidden marker
names the capsule, so a rerun finds and updates the same comment instead of adding one,
and carries the state, so the job can tell "fixed" without parsing the prose.

The state is the replay's own verdict, mapped by nothing here: at a ref it is the one fix
judgement's (runner.verdict.judge.judge_fix: `fixed` only when the rate at the ref lies below
the recorded commit's, `not-fixed` worded "still failing", `inconclusive` with how many more
passing runs would decide), so the job's exit and the comment agree with replay's.
"""
from __future__ import annotations

import re

from ..verdict.vocabulary import FACTS, Verdict
from ..outcome.runreport import ReplayReport
from .templates import render

MARKER = "replay-ci"
_MARKER_RE = re.compile(r"<!-- replay-ci capsule=([0-9A-Za-z._-]+) state=([a-z-]+) -->")


def marker(capsule_id: str, state: Verdict) -> str:
    safe = re.sub(r"[^0-9A-Za-z._-]", "", capsule_id) or "unknown"
    return f"<!-- {MARKER} capsule={safe} state={state} -->"


def read_marker(text: str) -> tuple[str, str] | None:
    """(capsule id, state) from a comment replay wrote, or None."""
    m = _MARKER_RE.search(text)
    return (m.group(1), m.group(2)) if m else None


def render_comment(report: ReplayReport, ref: str | None) -> str:
    state = report.verdict
    return render("ci/comment.md.j2", marker=marker(report.capsule.id, state), state=state,
                  word=FACTS[state].phrase, icon=FACTS[state].icon, report=report, ref=ref,
                  attempts=report.attempts, expected=report.expected)


