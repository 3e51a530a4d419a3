"""Environment facts as data that know how to apply themselves.

A fact is one key of a plan (an env variable, the base image, a runtime version,
a package-manager version, a lockfile, a pinned dependency, the diff) with its value,
under the keys of facts/factkeys.py (the ones `diff` lists). Each
kind says whether it applies at build time (a variant image) or run time (only
the `docker run` changes), how costly it is, and how to put a value into a plan.
Bisect is a search over sets of fact keys (reprotest's VARIATIONS, as data).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..facts import factkeys
from ..capsules.model import FrozenMap
from ..build.plan import Lock, Plan

Stage = Literal["build", "run"]
_ABSENT = object()


@dataclass(frozen=True)
class FactKind:
    prefix: str
    stage: Stage
    cost: int  # relative: run-time facts are cheap, a new base is dearest
    extract: Callable[[Plan], Mapping[str, Any]]
    apply: Callable[[Plan, str, Any], Plan]


@dataclass(frozen=True)
class Fact:
    key: str
    stage: Stage
    cost: int
    value: Any  # None: the fact is absent from that plan


def _map_apply(attr: str, prefix: str) -> Callable[[Plan, str, Any], Plan]:
    def apply(plan: Plan, key: str, value: Any) -> Plan:
        items = dict(getattr(plan, attr))
        name = key[len(prefix):]
        if value is None:
            items.pop(name, None)
        else:
            items[name] = value
        changed: dict[str, Any] = {attr: FrozenMap(items)}
        return dataclasses.replace(plan, **changed)

    return apply


def _tuple_apply(attr: str, prefix: str) -> Callable[[Plan, str, Any], Plan]:
    def apply(plan: Plan, key: str, value: Any) -> Plan:
        name = key[len(prefix):]
        items = [x for x in getattr(plan, attr) if x.name != name]
        if value is not None:
            items.append(value)
        changed: dict[str, Any] = {attr: tuple(sorted(items, key=lambda x: x.name))}
        return dataclasses.replace(plan, **changed)

    return apply


def _source_diff_apply(plan: Plan, key: str, value: Any) -> Plan:
    if plan.source is None:
        return plan
    return dataclasses.replace(plan, source=dataclasses.replace(plan.source, diff=value or ""))


_NODE_MANAGERS = ("npm", "pnpm", "yarn")


def _locks(plan: Plan) -> dict[str, Lock]:
    return {factkeys.lock(lk.manager): lk for lk in (plan.lock, plan.python_lock) if lk is not None}


def _lock_apply(plan: Plan, key: str, value: Any) -> Plan:
    """lock:MANAGER goes to the node or the Python lockfile slot, by its manager."""
    slot = "lock" if key.removeprefix("lock:") in _NODE_MANAGERS else "python_lock"
    changed: dict[str, Any] = {slot: value}
    return dataclasses.replace(plan, **changed)


KINDS: tuple[FactKind, ...] = (
    FactKind("env:", "run", 1, lambda p: {f"env:{k}": v for k, v in p.env.items()}, _map_apply("env", "env:")),
    FactKind("pin:node:", "build", 20, lambda p: {f"pin:node:{k}": v for k, v in p.node_pins.items()},
             _map_apply("node_pins", "pin:node:")),
    FactKind("pin:python:", "build", 20, lambda p: {f"pin:python:{k}": v for k, v in p.python_pins.items()},
             _map_apply("python_pins", "pin:python:")),
    FactKind(factkeys.SOURCE_DIFF, "build", 10, lambda p: {factkeys.SOURCE_DIFF: p.source.diff} if p.source else {},
             _source_diff_apply),
    FactKind("lock:", "build", 40, _locks, _lock_apply),
    FactKind("tool:", "build", 30, lambda p: {f"tool:{t.name}": t for t in p.tools}, _tuple_apply("tools", "tool:")),
    FactKind("runtime:", "build", 50, lambda p: {f"runtime:{r.name}": r for r in p.runtimes},
             _tuple_apply("runtimes", "runtime:")),
    FactKind(factkeys.PLATFORM_BASE, "build", 100, lambda p: {factkeys.PLATFORM_BASE: p.base},
             lambda p, k, v: dataclasses.replace(p, base=v)),
)


def kind_of(key: str) -> FactKind:
    for kind in KINDS:
        if key == kind.prefix or key.startswith(kind.prefix):
            return kind
    raise KeyError(key)


def facts(plan: Plan) -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    for kind in KINDS:
        for key, value in kind.extract(plan).items():
            out[key] = Fact(key, kind.stage, kind.cost, value)
    return out


def _comparable(value: Any) -> Any:
    """Runtimes compare by what gets installed, not by what was recorded."""
    if hasattr(value, "version") and hasattr(value, "source"):
        return (value.name, value.version)
    return value


def differences(good: Plan, bad: Plan) -> list[Fact]:
    """The facts of `bad` that differ from `good` (value None: absent in bad)."""
    g, b = facts(good), facts(bad)
    out = []
    for key in sorted(set(g) | set(b)):
        gv = g[key].value if key in g else None
        bv = b[key].value if key in b else None
        if _comparable(gv) != _comparable(bv):
            kind = kind_of(key)
            out.append(Fact(key, kind.stage, kind.cost, bv))
    return out


def apply(plan: Plan, changes: Iterable[Fact]) -> Plan:
    for fact in changes:
        plan = kind_of(fact.key).apply(plan, fact.key, fact.value)
    return plan
