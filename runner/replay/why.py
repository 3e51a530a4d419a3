"""Why a replay did not come back as recorded: every candidate cause, scored by the evidence
the project shows, each with that evidence and the command to try next. NOT-REPRODUCED and
DIFFERENT-FAILURE (and a FLAKY run, whose misses need a reason too) end with them; `--json`
carries all of them with their scores as `result.why[]`; the text shows the first five; the
farm, MCP and the PR comment show the first.

The score is the sum of what bears on the outcome (docs/signature.md, "Why"): a change the user
made (`--env`, `--ref`, `--patch`) after which the outcome changed comes first; then a request
the recording does not hold, and a run that ended as recorded with other output; a variable is
scored by the source reading it (`homedir.go:41 reads HOME`), the command line reading it, the
output naming it (or a path under HOME), it being a documented variable of a tool the command
runs, and the capsule recording it by name only; packages and runtimes by whether the command
runs them. A flaky failure that nothing direct explains is the command's own randomness.
"""
from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from ..build.plan import Fidelity
from ..httpreplay.served import HttpReport
from ..verdict.judge import Attempt, Expected, Verdict
from ..facts.reads import Read, command_reads
from ..facts.evidence import NOT_CANDIDATES, EnvEvidence, env_score, tools_run
from ..outcome.runreport import Cause

EXPLAINED: frozenset[Verdict] = frozenset({"not-reproduced", "different-failure", "flaky"})
DIRECT = 25  # a score at least this is direct evidence: a flaky run is explained by it, else by its own randomness
_PARAM = re.compile(r"'([^'=]+)=")  # the names in the matcher's "extra ['ts=1'], missing ['ts=2']"


@dataclass(frozen=True)
class Change:
    """What the user changed for this run (--ref, --patch): named first when the outcome changed."""

    fact: str  # "source --ref 1a2b3c4d5e6f", "source --patch"
    said: str  # what it changed, and what the run without it did


def likeliest(verdict: Verdict, expected: Expected, attempts: Sequence[Attempt], fidelity: Sequence[Fidelity],
              http: HttpReport | None, rerun: Sequence[str], *, argv: Sequence[str] = (),
              reads: Sequence[Read] = (), changes: Sequence[Change] = ()) -> tuple[Cause, ...]:
    """Every candidate cause of a run that did not come back as recorded, highest score first;
    none otherwise. `rerun`: the words that replay this capsule again as it was (`replay CAPSULE
    --repo …`); `argv` the command; `reads` the variables its source reads (reads.py)."""
    if verdict not in EXPLAINED:
        return ()
    evidence = EnvEvidence(tools_run(argv), (*reads, *command_reads(argv)), _texts(expected, attempts))
    ran = evidence.tools | {os.path.basename(w) for w in argv}  # what the command runs, by kind and by name
    found = [*_changes(changes, fidelity, rerun), *_http(http, rerun), *_output(expected, attempts),
             *_env(fidelity, evidence, rerun), *_unrecorded(fidelity, evidence, rerun),
             *_packages(fidelity, ran), *_approximated(fidelity, ran)]
    if verdict == "flaky" and not any(c.score >= DIRECT for c in found):
        found.append(_randomness(rerun))
    return tuple(sorted(found, key=lambda c: -c.score))  # stable: equal scores keep the table's order


def _line(words: Sequence[str]) -> str:
    return shlex.join(words)


def _texts(expected: Expected, attempts: Sequence[Attempt]) -> str:
    """The output the evidence reads: the recorded key lines and stdout, the attempts' tails."""
    parts = [*expected.key_lines, (expected.stdout or b"")[:65536].decode("utf-8", "replace")]
    parts += [a.output_tail[-8192:] for a in attempts[:5]]
    return "\n".join(parts)


def _changes(changes: Sequence[Change], fidelity: Sequence[Fidelity], rerun: Sequence[str]) -> list[Cause]:
    """The user's own changes: --env overrides (from the fidelity table), --ref and --patch."""
    out = [Cause("change", c.fact, c.said, "replay the capsule without it to see the recorded outcome", 200)
           for c in changes]
    for row in fidelity:
        if row.fact.startswith("env ") and row.why == "overridden with --env":
            name = row.fact.removeprefix("env ")
            out.append(Cause("change", row.fact, f"--env {name} replaced the recorded {name} ({row.recorded}), and "
                             "the outcome is not the recorded one after it",
                             f"{_line(_without_env(rerun, name))} (without --env {name})", 200))
    return out


def _without_env(rerun: Sequence[str], name: str) -> list[str]:
    out: list[str] = []
    for word in rerun:
        if word.startswith(f"{name}=") and out and out[-1] == "--env":
            out.pop()
        else:
            out.append(word)
    return out


def _http(http: HttpReport | None, rerun: Sequence[str]) -> list[Cause]:
    if http is None:
        return []
    out = []
    for u in http.unmatched:
        only_query = bool(u.differences) and all(d.part == "query" for d in u.differences)
        names = sorted({n for d in u.differences for n in _PARAM.findall(d.why)}) if only_query else []
        hint = (_line([*rerun, *(f"--http-ignore={n}" for n in names)]) if names else
                "compare the request with the recorded one (`replay CAPSULE --all` lists the HTTP calls)")
        said = "; ".join(d.why for d in u.differences) or "no recorded call is alike"
        near = f"; nearest recorded: {u.nearest_request}" if u.nearest_request else ""
        out.append(Cause("http", f"http {u.method} {u.url}",
                         f"the program made a request the recording does not hold ({said}){near}", hint, 100))
    for c in http.unservable:
        out.append(Cause("http", f"http {c.method} {c.url}", f"a recorded call replay cannot serve here ({c.why})",
                         "replay it where the address can be reached, or record the call under a name", 90))
    for h in http.unrecorded_hosts:
        out.append(Cause("http", f"http {h.host}", h.line, "record the run again with that host's calls", 80))
    return out


def _output(expected: Expected, attempts: Sequence[Attempt]) -> list[Cause]:
    """Runs that ended as recorded (the same exit code) but printed something else."""
    same_end = [a for a in attempts if a.classification == "other" and a.exit_code == expected.exit_code
                and a.signal == expected.signal]
    if not same_end:
        return []
    first = same_end[0]
    where = first.differs.said() if first.differs is not None else "the output's key lines differ"
    what = "passed as recorded" if not expected.failed else "failed with the recorded exit code"
    return [Cause("output", "output", f"{len(same_end)}/{len(attempts)} attempt(s) {what}, but {where}",
                  "the outcome came back and only the output differs: see result.attempts[].differs in "
                  "`--json`; docs/signature.md says what is compared", 95)]


def _env(fidelity: Sequence[Fidelity], evidence: EnvEvidence, rerun: Sequence[str]) -> list[Cause]:
    """Variables recorded by name only, or mapped to the container's own (HOME): scored by evidence."""
    out = []
    for row in fidelity:
        if not (row.fact.startswith("env ") and row.status == "not applied") or row.why == "overridden with --env":
            continue
        name = row.fact.removeprefix("env ")
        if name in NOT_CANDIDATES:
            continue
        mapped = row.why.startswith("host-specific")
        base = ("capsule: the host's value was recorded; the replay ran with the container's own", 3) if mapped \
            else ("capsule: recorded by name only; the replay ran without it", 5)
        score, said = env_score(name, evidence, base, tool=not mapped)
        out.append(Cause("env-value", row.fact, said, _env_next(name, rerun), score))
    return out


def _unrecorded(fidelity: Sequence[Fidelity], evidence: EnvEvidence, rerun: Sequence[str]) -> list[Cause]:
    """Variables the capsule does not record at all, that the project is seen reading."""
    recorded = {row.fact.removeprefix("env ") for row in fidelity if row.fact.startswith("env ")}
    out = []
    for name in evidence.read_names():
        if name in recorded:
            continue
        score, said = env_score(name, evidence, ("capsule: not recorded; the replay ran with the image's value, "
                                                 "if any", 0))
        out.append(Cause("env-unrecorded", f"env {name}", said, _env_next(name, rerun), score))
    return out


def _env_next(name: str, rerun: Sequence[str]) -> str:
    return f"{_line([*rerun, '--env', f'{name}=…'])} now; `replay capture --include-env {name}` next time"


def _packages(fidelity: Sequence[Fidelity], tools: frozenset[str]) -> list[Cause]:
    return [Cause("package", row.fact, f"recorded {row.recorded}, replayed {row.replayed}: {row.why or row.status}",
                  "bisect against a passing capsule (`replay bisect BAD --good GOOD`) to see whether it matters",
                  10 if _runs(row.fact, tools) else 3)
            for row in fidelity if row.status in ("not applied", "recorded, not installed")
            and row.fact.startswith(("package ", "pin ", "lock", "runtime "))]


def _approximated(fidelity: Sequence[Fidelity], tools: frozenset[str]) -> list[Cause]:
    out = []
    for row in fidelity:
        if row.status != "approximated":
            continue
        kind, _, name = row.fact.partition(" ")
        weight = {"runtime": 20, "package": 15, "libc": 10, "platform": 10}.get(kind, 8)
        weight = weight if _runs(row.fact, tools) else 3  # a runtime or manager the command does not run
        hint = (f"`replay bisect BAD --good GOOD --sweep runtime:{name}` against a passing capsule"
                if kind == "runtime" and name else
                "record the run again on a machine replay can match, or compare two capsules with `replay diff`")
        said = f"recorded {row.recorded}, replayed {row.replayed}" + (f" ({row.why})" if row.why else "")
        out.append(Cause("approximated", row.fact, said, hint, weight))
    return out


def _runs(fact: str, ran: frozenset[str]) -> bool:
    """Whether the command runs the runtime or package manager a fidelity row names ("runtime node",
    "package manager npm"); any other row counts as run (a package's runtime is not in its row)."""
    for prefix in ("runtime ", "package manager "):
        if fact.startswith(prefix):
            return fact.removeprefix(prefix).split(" ")[0] in ran
    return True


def _randomness(rerun: Sequence[str]) -> Cause:
    return Cause("randomness", "the command itself",
                 "no recorded fact explains it: the command's own randomness (no source, command line or output "
                 "evidence points at a recorded fact)",
                 f"`{_line([*rerun, '-n', '20'])}` measures its rate; `replay pin "
                 f"{rerun[1] if len(rerun) > 1 else 'CAPSULE'}` looks for a setting that makes it fail every time",
                 DIRECT)
