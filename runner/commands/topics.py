"""`replay help TOPIC`: exit codes, settings, formats, verdicts, durations.

The topics' text lives here only: `replay help TOPIC` prints it and the docs' help page
shows the same text (scripts/docs_gen.py writes it there; a test checks it is current).
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from .catalog import COMMANDS, FARM_RUN
from .common import GLOBALS
from ..units import DURATION_HELP as DURATION_FORMS
from ..verdict.vocabulary import FACTS, FARM_VERDICTS, UNJUDGED, VERDICTS
from ..config import SETTINGS


@dataclass(frozen=True)
class Topic:
    name: str
    summary: str
    text: Callable[[], str]


def _exit_codes() -> str:
    night = f"`replay farm run` judges a night, not one capsule: {FARM_RUN.exit_rule()}."  # its declaration's rule
    return f"""\
Every command exits with one of four codes:

  0  success: reproduced, fixed, valid, a culprit found, ready (doctor)
  1  a negative answer: not reproduced, not fixed, flaky, invalid, the capsules differ, no culprit
  2  bad input or usage: an unreadable capsule, a bad option, a commit that does not exist
  3  the environment failed: no engine, a build that could not run, a registry or a remote that did not answer

Two commands have a rule of their own:
  `replay capture` exits with its command's own code (it records a run, it does not judge one).
  {night}

Ctrl-C or SIGTERM: 130, after removing what replay made. With --json the envelope's exit_code is \
replay's own code; a replayed program's exit code is in the result (result.attempts[].exit_code).
"""


def setting_rows() -> list[tuple[str, str, str]]:
    """(variable, default, meaning) of every setting, from its one declaration: config.py's table, and
    for an option's own variable (REPLAY_SALT) the option's help and the commands that take it."""
    rows = []
    for s in SETTINGS:
        meaning = s.meaning
        if s.option:
            param = next(p for p in (*GLOBALS, *(p for c in COMMANDS for p in c.params))
                         if p.envvar == s.variable and s.option in p.flags)
            users = "every command" if param in GLOBALS else ", ".join(
                f"`replay {c.name}`" for c in COMMANDS if any(p.envvar == s.variable for p in c.params))
            meaning = f"{param.help.rstrip('.')} (= {s.option} of {users})"
        rows.append((s.variable, s.default, meaning))
    return rows


def _settings() -> str:
    lines = ["Read from the environment (`replay doctor` shows each one's value and where it came from):", ""]
    for variable, default, meaning in setting_rows():
        lines.append(f"  {variable}")
        lines.append(f"      default: {default}")
        lines.append(f"      {meaning.replace('`', '')}")
    return "\n".join(lines) + "\n"


def _formats() -> str:
    return """\
Three capsule formats, detected by content:

  twin capsule v1                  one JSON file ("twin": 1), recorded by twin (or `replay capture`)
  NovaFabric Run Capsule           a directory holding capsule.yaml, maybe sealed with DSSE (`nova capture`)
  CodeInstances codeinstances/0    one JSON file: every HTTP call, clock and random value

A capsule argument is a file, a directory (NovaFabric), an https:// or http:// URL (downloaded to \
the cache, at most REPLAY_CAPSULE_MAX_BYTES; a .tar.gz is a packed NovaFabric directory), or `-` for \
`inspect` and `verify`: a JSON capsule (twin or CodeInstances) on stdin. A NovaFabric capsule is a \
directory and cannot come on stdin.
"""


def _verdicts() -> str:
    width = max(len(v) for v in FARM_VERDICTS)
    lines = ["One vocabulary everywhere (replay, bisect trials, the farm, CI jobs):", ""]
    lines += [f"  {v:<{width}}  {FACTS[v].meaning}" for v in VERDICTS]  # the one table of meanings
    lines += ["", "The farm adds two states:", ""]
    lines += [f"  {v:<{width}}  {FACTS[v].meaning}" for v in UNJUDGED]
    lines += ["", "A run fails as recorded with the same exit code and failure signature; where the capsule "
              "recorded a pass, a run that passes reproduces it. A timed-out attempt decides nothing.",
              "Exit 0 for reproduced and fixed; every other verdict exits 1.", "",
              "The rate, and what the confidence means:", "",
              "  Every answer also says how often the recorded failure comes back: failures as recorded "
              "out of the runs that decided (a timed-out attempt is no run), as an interval that holds "
              "the true rate at --confidence (default 0.95, a Wilson interval): `fails in 21–72 % of "
              "runs (95 %)`. Runs that all agree say one side only: 3/3 is `at least 44 %`, 0/3 `at "
              "most 56 %` (three passes do not show the failure is gone).", "",
              "  A replay stops when decided: 3 runs that agree end it (a failure that comes back every "
              "time costs 3 runs); runs that disagree go on until the rate is known to within ±25 "
              "points, or --max-attempts (20) or --budget ends them. --attempts N runs exactly N.", "",
              "  A fix check (--patch, --ref, the farm's --ref, the PR job) runs the unpatched source "
              "first, then the changed one run by run: a failure as recorded decides not-fixed; fixed "
              "needs the changed rate's top below the unpatched rate's bottom (after 3/3 failures, 5 "
              "straight passes; after 6/12, 12). So a change that changes nothing is called fixed no "
              "more often than the confidence allows; when the budget ends first, the answer is "
              "inconclusive and says how many more passing runs would decide."]
    return "\n".join(lines) + "\n"


def _durations() -> str:
    return f"""\
--timeout on `replay`, `replay bisect` and `replay farm run` takes a duration: {DURATION_FORMS}.
Examples: 90s, 15m, 1h, 1h30m, 1.5h, 500ms.

A bare number is seconds (`--timeout 15` is 15 s, as before units existed); replay says so on \
stderr, because twin's --timeout counts minutes: twin's `--timeout 15` is `--timeout 15m` here. At \
least 1 s; anything else is a usage error naming the accepted forms (exit 2). The default is 10m.
"""


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("exit-codes", "what 0, 1, 2 and 3 mean", _exit_codes),
    Topic("settings", "every REPLAY_* variable, its default and where it is read", _settings),
    Topic("formats", "the capsule formats, URLs and stdin", _formats),
    Topic("verdicts", "reproduced, flaky, fixed...: what each verdict means", _verdicts),
    Topic("durations", "how --timeout reads 90s, 15m, 1h (a bare number is seconds)", _durations),
)}


def wrapped(text: str, width: int) -> str:
    """A topic's text fitted to `width` columns: a long line goes on under where its words start (a
    table row's meaning column, past the first run of two blanks; else its own indent). The texts
    write each paragraph as one line, so that it is filled to the width, never cut at a fixed one."""
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        column = re.search(r"\S {2,}(?=\S)", line)
        hang = column.end() if column and column.end() < width // 2 else len(line) - len(line.lstrip())
        out.append(textwrap.fill(line.strip(), width, initial_indent=line[:len(line) - len(line.lstrip())],
                                 subsequent_indent=" " * hang, break_long_words=False, break_on_hyphens=False))
    return "\n".join(out) + "\n"


def listing() -> str:
    width = max(len(name) for name in TOPICS)
    lines = ["Topics (replay help TOPIC):"]
    lines += [f"  {t.name:<{width}}  {t.summary}" for t in TOPICS.values()]
    return "\n".join(lines) + "\n"
