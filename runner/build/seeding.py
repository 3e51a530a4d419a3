"""Run-time settings on a plan: the seeds the recorded run names, and a capsule's pin.

A framework that draws at random prints (or was given) the seed it drew with: Hypothesis's
`@seed(N)` / `--hypothesis-seed=N`, pytest-randomly's `--randomly-seed=N`, `go test -shuffle`'s
`-test.shuffle N`, jest's `Seed: N`; a recorded `PYTHONHASHSEED` is one too. The replay applies
it, as the framework takes it: an argv word where the recorded command gives the framework its
options, else the variable the framework reads them from (PYTEST_ADDOPTS, GOFLAGS). A capsule's
pin (`replay pin -o`) adds the settings that made its failure come back every time. Every value is
checked (verdict/seeds.py: digits only) and reaches an argv word, a variable or the container's CPU
limit: never the image (plan.py: all of these are run-time fields).
"""
from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Mapping
from datetime import timedelta

from ..capsules.model import Capsule, FrozenMap
from ..errors import CapsuleError
from ..verdict import seeds
from .plan import EnvSetting, Fidelity, Plan

# the flag each framework takes its seed by, and the variable it also reads its flags from
_FLAGS = {"hypothesis": ("--hypothesis-seed", "PYTEST_ADDOPTS"), "randomly": ("--randomly-seed", "PYTEST_ADDOPTS"),
          "go-shuffle": ("-shuffle", "GOFLAGS"), "jest": ("--seed", None)}


def recorded_text(capsule: Capsule) -> str:
    """What the recorded run printed, as far as the capsule has it."""
    cmd = capsule.command
    parts = [cmd.failure.output_tail if cmd.failure and cmd.failure.output_tail else ""]
    parts += [b.data.decode("utf-8", "replace") for b in (cmd.stdout, cmd.stderr) if b is not None]
    return "\n".join(parts)


def recorded_seeds(capsule: Capsule) -> dict[str, str]:
    """kind -> seed: those the recorded output names and those its argv gave (verdict/seeds.py)."""
    found = seeds.printed_seeds(recorded_text(capsule))
    found.update(seeds.given_seeds(capsule.command.argv))
    hash_seed = capsule.env.get("PYTHONHASHSEED")
    if hash_seed is not None and hash_seed.value and seeds.valid_seed(hash_seed.value):
        found["PYTHONHASHSEED"] = hash_seed.value
    return found


def seeded(capsule: Capsule, plan: Plan, apply: bool = True, extra: Mapping[str, str] = FrozenMap()) -> Plan:
    """The plan with the recorded seeds and the capsule's pin applied (`apply`: not --no-seeds), and
    a fidelity row for each; `extra`: a pin given for every capsule (bisect's), under the capsule's own."""
    given = seeds.given_seeds(capsule.command.argv)
    pin = {**extra, **(capsule.pin.settings if capsule.pin is not None else {})}
    rows: list[Fidelity] = []
    for kind, value in recorded_seeds(capsule).items():
        if kind in pin and apply:
            continue  # the pin's row says what it is set to
        if kind in given or kind == "PYTHONHASHSEED" and apply:
            rows.append(Fidelity("seed", f"{kind} {value}", value, "exact", f"applied, recorded {value} (in the "
                                 f"recorded {'command' if kind in given else 'environment'})"))
        elif not apply:
            plan = _unset_hash_seed(plan) if kind == "PYTHONHASHSEED" else plan
            rows.append(Fidelity("seed", f"{kind} {value}", "drawn anew", "not applied", "--no-seeds"))
        else:
            plan, how = with_setting(plan, kind, value)
            rows.append(Fidelity("seed", f"{kind} {value}", how or "drawn anew", "exact" if how else "not applied",
                                 f"applied, recorded {value}" if how else _cannot(kind)))
    if seeds.asks_to_reproduce(recorded_text(capsule)):
        rows.append(Fidelity("seed", "@reproduce_failure(...)", "not used", "not applied",
                             "Hypothesis's blob is a decorator in the source; the seed, where printed, is applied"))
    if pin:
        plan, pin_rows = pinned(plan, pin, capsule.provenance.path, apply)
        rows += pin_rows
    return dataclasses.replace(plan, fidelity=(*plan.fidelity, *rows)) if rows else plan


def pinned(plan: Plan, settings: Mapping[str, str], origin: str, apply: bool = True) -> tuple[Plan, list[Fidelity]]:
    """The plan under a pin's settings (each checked), and a fidelity row for each."""
    rows = []
    for name, value in settings.items():
        problem = seeds.setting_problem(name, value)
        if problem is not None:
            raise CapsuleError(origin, f"pin: {problem}")
        how = None
        if apply:
            plan, how = with_setting(plan, name, value)
        rows.append(Fidelity(f"pin {name}", value, how or "not set", "exact" if how else "not applied",
                             "the capsule's pin" if how else "--no-seeds" if not apply else _cannot(name)))
    return plan, rows


def with_setting(plan: Plan, name: str, value: str) -> tuple[Plan, str | None]:
    """The plan with NAME=VALUE applied, and how (None: this command offers no way to)."""
    if name in _FLAGS:
        return _flag(plan, name, value)
    if name in ("PYTHONHASHSEED", "GOMAXPROCS"):
        return _env(plan, name, value), f"{name}={value}"
    if name == "cpus":
        return dataclasses.replace(plan, cpus=int(value)), f"--cpus {value}"
    if plan.clock_start is None:  # clock
        return plan, None
    return dataclasses.replace(plan, clock_start=_shifted(plan.clock_start, int(value))), f"clock {int(value):+d}s"


def _flag(plan: Plan, kind: str, value: str) -> tuple[Plan, str | None]:
    flag, variable = _FLAGS[kind]
    argv, replaced = _replaced(plan.argv, flag, value)
    if replaced:
        return dataclasses.replace(plan, argv=argv), f"{flag}={value}"
    if kind == "jest":
        return _jest(plan, value)
    assert variable is not None
    current = plan.env.get(variable)
    if current is not None and current.state not in ("set", "empty"):
        return plan, None  # a value supplied with --env: replay does not know it, so cannot add to it
    words = f"{current.value} " if current is not None and current.value else ""
    return _env(plan, variable, f"{words}{flag}={value}"), f"{variable}={words}{flag}={value}"


def _replaced(argv: tuple[str, ...], flag: str, value: str) -> tuple[tuple[str, ...], bool]:
    """argv with FLAG's value (`FLAG=X`, `FLAG X`; go's `-FLAG`/`--FLAG`/`-test.FLAG` alike) set to VALUE."""
    names = {flag, "--shuffle", "-test.shuffle"} if flag == "-shuffle" else {flag}
    out = list(argv)
    for i, word in enumerate(out):
        name, eq, _ = word.partition("=")
        if name in names and eq:
            out[i] = f"{name}={value}"
            return tuple(out), True
        if word in names and i + 1 < len(out):
            out[i + 1] = value
            return tuple(out), True
    return argv, False


def _jest(plan: Plan, value: str) -> tuple[Plan, str | None]:
    """jest reads its seed from its command line only: added where the recorded command runs jest
    (itself, or the package script `npm test` / `yarn test` runs, after `--`)."""
    names = [posixpath.basename(w) for w in plan.argv]
    if any(n in ("jest", "jest.js") for n in names):
        return dataclasses.replace(plan, argv=(*plan.argv, f"--seed={value}")), f"--seed={value}"
    if names and names[0] in ("npm", "yarn", "pnpm") and "test" in plan.argv[1:3]:
        extra = ("--seed=" + value,) if "--" in plan.argv or names[0] != "npm" else ("--", f"--seed={value}")
        return dataclasses.replace(plan, argv=(*plan.argv, *extra)), f"--seed={value}"
    return plan, None


def _env(plan: Plan, name: str, value: str) -> Plan:
    return dataclasses.replace(plan, env=FrozenMap({**plan.env, name: EnvSetting("set", value)}))


def _unset_hash_seed(plan: Plan) -> Plan:
    if plan.env.get("PYTHONHASHSEED") is None:
        return plan
    return dataclasses.replace(plan, env=FrozenMap({**plan.env, "PYTHONHASHSEED": EnvSetting("absent")}))


def _shifted(start: str, seconds: int) -> str:
    from datetime import datetime

    moment = datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return moment.isoformat().replace("+00:00", "Z")


def _cannot(kind: str) -> str:
    return {"jest": "the recorded command does not run jest itself (its seed is a command-line option only)",
            "clock": "the capsule records no clock"}.get(kind, "a value supplied with --env holds the variable "
                                                               "the framework reads it from")
