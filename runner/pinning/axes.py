"""The axes of nondeterminism a recorded command exposes, and the settings `replay pin` tries on each.

Each axis is tried alone, over the recorded run's own settings (its recorded seeds applied):
the frameworks' seeds (Hypothesis, jest), the test order (pytest-randomly's seed, `go test
-shuffle`), PYTHONHASHSEED for Python, GOMAXPROCS for Go, the container's CPU count, and the
recorded clock's offset where a clock is recorded. What a command exposes is read from its argv,
its recorded output and its recorded packages: a setting a command cannot take is not tried.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..build.plan import Plan
from ..build.seeding import recorded_seeds, recorded_text
from ..capsules.model import Capsule, FrozenMap
from ..verdict.seeds import given_seeds

RECORDED = "as recorded"
AXES = (RECORDED, "seed", "order", "PYTHONHASHSEED", "GOMAXPROCS", "cpus", "clock")
SEED_VALUES = ("1", "2", "3", "4")  # seeds tried where none is recorded: any few do, none is special
HASH_SEEDS = ("0", "1", "2", "3")
GOMAXPROCS = ("1", "2", "4", "8")
CLOCK_OFFSETS = ("-86400", "-3600", "3600", "86400")  # a day and an hour either way: midnight, DST, expiry
_AXIS_OF = {"hypothesis": "seed", "jest": "seed", "randomly": "order", "go-shuffle": "order",
            "PYTHONHASHSEED": "PYTHONHASHSEED"}


@dataclass(frozen=True)
class Candidate:
    """One setting to try: the axis it varies and the settings (verdict/seeds.py names) it applies."""

    axis: str
    settings: FrozenMap[str, str]

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings.items()) or RECORDED


@dataclass(frozen=True)
class Exposed:
    """What the recorded command is and uses, as far as the capsule tells."""

    python: bool
    go_test: bool
    frameworks: frozenset[str]  # the seeded ones it runs: hypothesis, randomly, go-shuffle, jest


def exposed(capsule: Capsule) -> Exposed:
    argv = capsule.command.argv
    names = [posixpath.basename(w) for w in argv]
    text = recorded_text(capsule)
    packages = {p.lower() for p in capsule.resolved.python}
    # what runs is read from the argv and the output; the packages say only what pytest has loaded
    pytest = any("pytest" in n for n in names) or "test session starts" in text
    go_test = bool(names) and names[0] == "go" and "test" in argv[1:3] or "-test.shuffle" in text
    frameworks = {k for k, present in (
        ("hypothesis", pytest and ("hypothesis" in packages or "hypothesis" in text.lower())),
        ("randomly", pytest and ("pytest-randomly" in packages or "randomly-seed" in text)),
        ("go-shuffle", go_test), ("jest", any(n in ("jest", "jest.js") for n in names) or "jest" in text))
        if present}  # fmt: skip
    python = pytest or bool(names) and names[0].startswith("python")
    return Exposed(python, go_test, frozenset(frameworks))


def candidates(capsule: Capsule, plan: Plan, cores: int, seeds: bool = True) -> tuple[Candidate, ...]:
    """Every setting to try, the recorded run's own first (its recorded seeds, stated as the pin)."""
    what = exposed(capsule)
    recorded = {k: v for k, v in recorded_seeds(capsule).items() if k not in given_seeds(capsule.command.argv)} \
        if seeds else {}
    out = [Candidate(RECORDED, FrozenMap(recorded))]

    def axis(name: str, setting: str, values: tuple[str, ...]) -> None:
        out.extend(Candidate(name, FrozenMap({**recorded, setting: v})) for v in values if recorded.get(setting) != v)

    for kind in sorted(what.frameworks):
        if kind not in given_seeds(capsule.command.argv):
            axis(_AXIS_OF[kind], kind, SEED_VALUES)
    if what.python:
        axis("PYTHONHASHSEED", "PYTHONHASHSEED", HASH_SEEDS)
    if what.go_test:
        axis("GOMAXPROCS", "GOMAXPROCS", GOMAXPROCS)
    if cores > 1:
        axis("cpus", "cpus", tuple(dict.fromkeys(("1", str(cores)))))
    if plan.clock_start is not None:
        axis("clock", "clock", CLOCK_OFFSETS)
    return tuple(out)
