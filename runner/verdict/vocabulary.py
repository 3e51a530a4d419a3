"""The one verdict module: the words every report uses, and one table of what each means.

How an attempt is classified, the verdicts, which of them succeed and which "reproduce",
the farm's two extra states, the kinds of change between two nights and the per-verdict
facts (label, meaning, icon, JUnit outcome, colour) are defined here once; judge.py judges
in these words, and every writer reads them from here: `FACTS[verdict].icon`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

# How one attempt ended, against the recorded outcome.
Classification = Literal["recorded", "pass", "other", "inconclusive"]
# What a set of attempts says; `fixed` / `not-fixed` only when a fix is checked.
Verdict = Literal["reproduced", "different-failure", "not-reproduced", "flaky", "inconclusive", "fixed", "not-fixed"]
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
SUCCESS: frozenset[Verdict] = frozenset({"reproduced", "fixed"})  # exit 0; every other verdict exits 1
# A run "reproduces" (a fix's baseline, a farm's newly reproducing) when the recorded failure
# comes back at least sometimes.
REPRODUCES: frozenset[Verdict] = frozenset({"reproduced", "flaky"})


def exit_code_of(verdict: Verdict) -> int:
    return 0 if verdict in SUCCESS else 1


__all__ = ["CLASSIFICATIONS", "Classification", "FACTS", "FARM_ORDER", "FARM_VERDICTS", "FarmVerdict", "JunitOutcome",
           "REPRODUCES", "SUCCESS", "TRANSITION_KINDS", "TransitionKind", "Unjudged", "VERDICTS", "Verdict",
           "VerdictFacts", "attention_rank", "exit_code_of", "facts_of", "is_trouble"]

CLASSIFICATIONS: tuple[Classification, ...] = get_args(Classification)

# The farm's states beyond a verdict: a capsule that could not be judged, and why.
Unjudged = Literal["broken", "infra-error"]
UNJUDGED: tuple[Unjudged, ...] = get_args(Unjudged)
FarmVerdict = Verdict | Unjudged
FARM_VERDICTS: tuple[FarmVerdict, ...] = (*VERDICTS, *UNJUDGED)

# The farm's verdicts in attention order, the one order every farm view reads (rows within a
# group, the counts): what needs someone first (a capsule that cannot be judged, a failure),
# then the rest.
FARM_ORDER: tuple[FarmVerdict, ...] = ("broken", "infra-error", "reproduced", "different-failure", "not-fixed",
                                       "flaky", "inconclusive", "not-reproduced", "fixed")


def attention_rank(verdict: str | None) -> int:
    """A verdict's place in FARM_ORDER (a word a newer replay wrote: after every known one)."""
    return FARM_ORDER.index(verdict) if verdict in FARM_ORDER else len(FARM_ORDER)


# What changed for a capsule between two nights ("since last night"); `no-longer-reproducing`
# only after --fixed-after nights in a row without the failure.
TransitionKind = Literal["newly-reproducing", "no-longer-reproducing", "fixed", "flaky", "signature-changed",
                         "broken", "new", "other"]
TRANSITION_KINDS: tuple[TransitionKind, ...] = get_args(TransitionKind)

JunitOutcome = Literal["pass", "failure", "error", "skipped"]


@dataclass(frozen=True)
class VerdictFacts:
    label: str  # as a badge or a table cell says it
    meaning: str  # one line, for legends and tooltips
    icon: str  # a PR comment's or a terminal's mark
    junit: JunitOutcome  # a reproducing failure is a red test: the bug is still there
    colour: str  # CSS colour, used only where the state is news or trouble
    style: str  # rich style for a terminal, on the same rule
    phrase: str  # as a sentence says it ("still failing")
    trouble: bool = False  # needs someone even when it did not change (the farm cannot judge it)


_FACTS: dict[FarmVerdict, VerdictFacts] = {
    "reproduced": VerdictFacts("reproduced", "the recorded outcome came back", "🔁", "failure", "#cf222e",
                               "red", "reproduced"),
    "different-failure": VerdictFacts("different failure", "fails, with another signature", "⚠️", "failure",
                                      "#d1570f", "dark_orange", "different failure"),
    "flaky": VerdictFacts("flaky", "some attempts reproduce, some do not", "🎲", "pass", "#bf8700", "yellow",
                          "flaky"),
    "not-reproduced": VerdictFacts("not reproduced", "the recorded failure did not come back at its commit", "➖",
                                   "pass", "#0969da", "blue", "not reproduced"),
    "inconclusive": VerdictFacts("inconclusive", "no attempt decided (timeouts), or too few runs to judge a fix", "❔",
                                 "skipped", "#8c959f", "dim", "inconclusive"),
    "fixed": VerdictFacts("fixed", "fails less often with the fix than without it, beyond chance", "✅", "pass",
                          "#1a7f37", "green", "fixed"),
    "not-fixed": VerdictFacts("not fixed", "still fails as recorded with the fix", "❌", "failure", "#82071e",
                              "bold red", "still failing"),
    "broken": VerdictFacts("broken", "the capsule cannot be replayed for its own reasons", "⛔", "error", "#8250df",
                           "magenta", "broken", trouble=True),
    "infra-error": VerdictFacts("infra error", "the engine or a package source failed; retried next night", "🔧",
                                "error", "#424a53", "bold", "infra error", trouble=True),
}
FACTS: Mapping[FarmVerdict, VerdictFacts] = MappingProxyType(_FACTS)
UNKNOWN = VerdictFacts("unknown", "a state this replay does not know", "?", "error", "#bf3989", "", "unknown")
STEADY_COLOUR = "#8c959f"  # a state that did not change and needs no one: grey, whatever the verdict


def facts_of(verdict: str | None) -> VerdictFacts:
    """The facts of a verdict read from a history (which may hold a word a newer replay wrote)."""
    return FACTS.get(verdict, UNKNOWN) if verdict is not None else UNKNOWN  # type: ignore[call-overload]


def is_trouble(verdict: str | None) -> bool:
    return facts_of(verdict).trouble
