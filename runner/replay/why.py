"""Why a replay did not come back as recorded: the likeliest causes, ranked, from what replay
knows (the fidelity table, the HTTP report, the attempts' own output), each with the command to
try next. NOT-REPRODUCED and DIFFERENT-FAILURE (and a FLAKY run, whose misses need a reason too)
end with them; `--json` carries them as `result.why[]`; the farm, MCP and the PR comment show
the first.

A cause is ranked by how directly the evidence bears on the outcome: a request the program made
that the recording does not hold comes first (the program saw another world), then a run that
ended as recorded with other output, then variables recorded without their value (those that
usually decide a CI failure before the rest), then packages and runtimes not replayed exactly.
"""
from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..build.plan import Fidelity
from ..httpreplay.report import HttpReport
from ..verdict.judge import Attempt, Expected, Verdict

CauseKind = Literal["http", "output", "env-value", "package", "approximated"]
EXPLAINED: frozenset[Verdict] = frozenset({"not-reproduced", "different-failure", "flaky"})
MAX_CAUSES = 8
_PARAM = re.compile(r"'([^'=]+)=")  # the names in the matcher's "extra ['ts=1'], missing ['ts=2']"
# Variables that decide CI failures more often than others (colour, width, locale, mode): named first.
DECISIVE = ("TERM", "CI", "COLUMNS", "LANG", "LANGUAGE", "TZ", "NODE_ENV", "FORCE_COLOR", "NO_COLOR", "PYTHONHASHSEED",
            "TTY_COMPATIBLE", "GOFLAGS", "RAILS_ENV", "APP_ENV")


@dataclass(frozen=True)
class Cause:
    cause: CauseKind
    fact: str  # the fact as the fidelity table names it: "env APP_LANG", "runtime node", "http GET …"
    evidence: str  # what replay saw
    next: str  # the command (or step) to try next


Ranked = list[tuple[int, Cause]]  # a cause and its weight: higher first


def likeliest(verdict: Verdict, expected: Expected, attempts: Sequence[Attempt], fidelity: Sequence[Fidelity],
              http: HttpReport | None, rerun: Sequence[str]) -> tuple[Cause, ...]:
    """The causes of a run that did not come back as recorded, likeliest first; none otherwise.
    `rerun`: the words that replay this capsule again as it was (`replay CAPSULE --repo …`)."""
    if verdict not in EXPLAINED:
        return ()
    found = [*_http(http, rerun), *_output(expected, attempts), *_env(fidelity, rerun), *_packages(fidelity),
             *_approximated(fidelity)]
    return tuple(cause for _, cause in sorted(found, key=lambda wc: -wc[0])[:MAX_CAUSES])


def _line(words: Sequence[str]) -> str:
    return shlex.join(words)


def _http(http: HttpReport | None, rerun: Sequence[str]) -> Ranked:
    if http is None:
        return []
    out: Ranked = []
    for u in http.unmatched:
        only_query = bool(u.differences) and all(d.part == "query" for d in u.differences)
        names = sorted({n for d in u.differences for n in _PARAM.findall(d.why)}) if only_query else []
        hint = (_line([*rerun, *(f"--http-ignore={n}" for n in names)]) if names else
                "compare the request with the recorded one (`replay CAPSULE --all` lists the HTTP calls)")
        said = "; ".join(d.why for d in u.differences) or "no recorded call is alike"
        near = f"; nearest recorded: {u.nearest_request}" if u.nearest_request else ""
        out.append((100, Cause("http", f"http {u.method} {u.url}",
                               f"the program made a request the recording does not hold ({said}){near}", hint)))
    for c in http.unservable:
        out.append((90, Cause("http", f"http {c.method} {c.url}", f"a recorded call replay cannot serve here ({c.why})",
                              "replay it where the address can be reached, or record the call under a name")))
    for h in http.unrecorded_hosts:
        out.append((80, Cause("http", f"http {h.host}", h.line, "record the run again with that host's calls")))
    return out


def _output(expected: Expected, attempts: Sequence[Attempt]) -> Ranked:
    """Runs that ended as recorded (the same exit code) but printed something else."""
    same_end = [a for a in attempts if a.classification == "other" and a.exit_code == expected.exit_code
                and a.signal == expected.signal]
    if not same_end:
        return []
    first = same_end[0]
    where = first.differs.said() if first.differs is not None else "the output's key lines differ"
    what = "passed as recorded" if not expected.failed else "failed with the recorded exit code"
    return [(95, Cause("output", "output", f"{len(same_end)}/{len(attempts)} attempt(s) {what}, but {where}",
                       "the outcome came back and only the output differs: see result.attempts[].differs in "
                       "`--json`; docs/signature.md says what is compared"))]


def _env(fidelity: Sequence[Fidelity], rerun: Sequence[str]) -> Ranked:
    out: Ranked = []
    for row in fidelity:
        if not (row.fact.startswith("env ") and row.status == "not applied" and "value not recorded" in row.recorded):
            continue
        name = row.fact.removeprefix("env ")
        weight = 70 if name in DECISIVE or name.startswith("LC_") else 40
        out.append((weight, Cause("env-value", row.fact, f"{name} was set when the run was recorded; its value was "
                                  "not, and the replay ran without it",
                                  f"{_line([*rerun, '--env', f'{name}=…'])} now; `replay capture --include-env "
                                  f"{name}` next time")))
    return out


def _packages(fidelity: Sequence[Fidelity]) -> Ranked:
    return [(30, Cause("package", row.fact, f"recorded {row.recorded}, replayed {row.replayed}: "
                                            f"{row.why or row.status}",
                       "bisect against a passing capsule (`replay bisect BAD --good GOOD`) to see whether it matters"))
            for row in fidelity if row.status in ("not applied", "recorded, not installed")
            and row.fact.startswith(("package ", "pin ", "lock", "runtime "))]


def _approximated(fidelity: Sequence[Fidelity]) -> Ranked:
    out: Ranked = []
    for row in fidelity:
        if row.status != "approximated":
            continue
        kind, _, name = row.fact.partition(" ")
        weight = {"runtime": 35, "package": 25, "libc": 20, "platform": 20}.get(kind, 15)
        hint = (f"`replay bisect BAD --good GOOD --sweep runtime:{name}` against a passing capsule"
                if kind == "runtime" and name else
                "record the run again on a machine replay can match, or compare two capsules with `replay diff`")
        said = f"recorded {row.recorded}, replayed {row.replayed}" + (f" ({row.why})" if row.why else "")
        out.append((weight, Cause("approximated", row.fact, said, hint)))
    return out
