"""`replay help TOPIC`: exit codes, settings, formats, verdicts, durations.

The topics' text lives here only: `replay help TOPIC` prints it and the docs' help page
shows the same text (scripts/docs_gen.py writes it there; a test checks it is current).
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from ..commands.catalog import FARM_RUN
from ..durations import HELP as DURATION_FORMS
from ..verdict.facts import VERDICTS
from ..settingsref import SETTINGS


@dataclass(frozen=True)
class Topic:
    name: str
    summary: str
    text: Callable[[], str]


def _exit_codes() -> str:
    # farm run's rule is its declaration's (runner/commands/catalog.py), said once
    night = textwrap.fill(f"`replay farm run` judges a night, not one capsule: {FARM_RUN.exit_rule()}.",
                          width=78, initial_indent="  ", subsequent_indent="  ")
    return f"""\
Every command exits with one of four codes:

  0  success: reproduced, fixed, valid, a culprit found, ready (doctor)
  1  a negative answer: not reproduced, not fixed, flaky, invalid, the capsules differ, no culprit
  2  bad input or usage: an unreadable capsule, a bad option, a commit that does not exist
  3  the environment failed: no engine, a build that could not run, a registry that did not answer

Two commands have a rule of their own:
  `replay capture` exits with its command's own code (it records a run, it does
  not judge one).
{night}
Ctrl-C or SIGTERM: 130, after removing what replay made.
With --json the envelope's exit_code is replay's own code; a replayed program's exit code is
in the result (result.attempts[].exit_code).
"""


def _settings() -> str:
    lines = ["Read from the environment (`replay doctor` shows each one's value and where it came from):", ""]
    for s in SETTINGS:
        lines.append(f"  {s.variable}")
        lines.append(f"      default: {s.default}")
        lines.append(f"      {s.meaning.replace('`', '')}")
        lines.append(f"      read in: {s.read_in}")
    return "\n".join(lines) + "\n"


def _formats() -> str:
    return """\
Three capsule formats, detected by content:

  twin capsule v1                  one JSON file ("twin": 1), recorded by twin (or `replay capture`)
  NovaFabric Run Capsule           a directory holding capsule.yaml, maybe sealed with DSSE (`nova capture`)
  CodeInstances codeinstances/0    one JSON file: every HTTP call, clock and random value

A capsule argument is a file, a directory (NovaFabric), an https:// or http:// URL (downloaded to
the cache, at most REPLAY_CAPSULE_MAX_BYTES; a .tar.gz is a packed NovaFabric directory), or `-`
for `inspect` and `verify`: a JSON capsule (twin or CodeInstances) on stdin. A NovaFabric capsule
is a directory and cannot come on stdin.
"""


_VERDICT_MEANING = {
    "reproduced": "every attempt failed as recorded (the same exit code and failure signature); "
                  "a recorded pass that passes counts too",
    "different-failure": "the attempts failed, but not as recorded (another signature or exit code)",
    "not-reproduced": "the attempts passed where the capsule recorded a failure",
    "flaky": "some attempts reproduced, others did not",
    "inconclusive": "every attempt timed out; with --patch also: the unpatched run did not reproduce",
    "fixed": "with --patch / --ref: the unpatched run reproduces and every patched attempt passes",
    "not-fixed": "with --patch / --ref: patched attempts still fail as recorded, none passes",
}


def _verdicts() -> str:
    width = max(len(v) for v in VERDICTS)
    lines = ["One vocabulary everywhere (replay, bisect trials, the farm, CI jobs):", ""]
    lines += [f"  {v:<{width}}  {_VERDICT_MEANING[v]}" for v in VERDICTS]
    lines += ["", "Exit 0 for reproduced and fixed; every other verdict exits 1.",
              "The farm adds two states: broken (the capsule cannot be replayed for its own reasons)",
              "and infra-error (the engine or a package source failed; retried next night)."]
    return "\n".join(lines) + "\n"


def _durations() -> str:
    return f"""\
--timeout on `replay`, `replay bisect` and `replay farm run` takes a duration: {DURATION_FORMS}.
Examples: 90s, 15m, 1h, 1h30m, 1.5h, 500ms.

A bare number is seconds (`--timeout 15` is 15 s, as before units existed); replay says so on
stderr, because twin's --timeout counts minutes: twin's `--timeout 15` is `--timeout 15m` here.
At least 1 s; anything else is a usage error naming the accepted forms (exit 2). The default is 10m.
"""


TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("exit-codes", "what 0, 1, 2 and 3 mean", _exit_codes),
    Topic("settings", "every REPLAY_* variable, its default and where it is read", _settings),
    Topic("formats", "the capsule formats, URLs and stdin", _formats),
    Topic("verdicts", "reproduced, flaky, fixed...: what each verdict means", _verdicts),
    Topic("durations", "how --timeout reads 90s, 15m, 1h (a bare number is seconds)", _durations),
)}


def listing() -> str:
    width = max(len(name) for name in TOPICS)
    lines = ["Topics (replay help TOPIC):"]
    lines += [f"  {t.name:<{width}}  {t.summary}" for t in TOPICS.values()]
    return "\n".join(lines) + "\n"
