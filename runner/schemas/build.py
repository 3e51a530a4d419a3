"""Writes runner/schemas/*.schema.json (JSON Schema draft 2020-12) for every command's --json.

The result schemas are derived from the very dataclasses the codec encodes (so a field
added to a report shows up here), plus the few shapes built by hand (diff, signature,
the farm's night). A /1 schema lists every field as required and allows new ones: the
number changes only when a field changes meaning or goes away.

    python -m runner.schemas.build     # after changing a result's shape
"""
from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..capsules.model import FrozenMap

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://replay.invalid/schemas/"  # ids only: the files are read from the package, never fetched
HERE = Path(__file__).resolve().parent
STR, INT, NUM, BOOL, NULL = ({"type": t} for t in ("string", "integer", "number", "boolean", "null"))


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, NULL]}


def obj(props: Mapping[str, Any], required: bool = True) -> dict[str, Any]:
    return {"type": "object", "properties": dict(props), **({"required": list(props)} if required else {})}


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


class Derive:
    """Schemas of dataclasses as runner/codec.py's encode writes them."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def of(self, tp: Any) -> dict[str, Any]:
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            return {}
        if origin in (typing.Union, types.UnionType):
            return {"anyOf": [self.of(a) for a in args]}
        if origin is typing.Literal:
            return {"enum": list(args)}
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return self._dataclass(tp)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return array(self.of(args[0]))
            return {"type": "array", "prefixItems": [self.of(a) for a in args], "items": False}
        if origin in (FrozenMap, Mapping, dict) or tp in (FrozenMap, dict):
            return {"type": "object", "additionalProperties": self.of(args[1]) if args else {}}
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"enum": [m.value for m in tp]}
        return self._scalar(tp)

    def _scalar(self, tp: Any) -> dict[str, Any]:
        if tp is type(None):
            return NULL
        if tp is bytes:  # text when it is UTF-8, else {"base64": ...}
            return {"anyOf": [STR, obj({"base64": STR})]}
        known = {str: STR, bool: BOOL, int: INT, float: NUM}
        if tp in known:
            return known[tp]
        raise TypeError(f"no schema for {tp!r}")

    def _dataclass(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # recursion guard
            hints = typing.get_type_hints(cls)
            self.defs[name] = obj({f.name: self.of(hints[f.name]) for f in dataclasses.fields(cls)})
        return {"$ref": f"#/$defs/{name}"}

    def root(self, cls: type, extra: Mapping[str, Any] = {}) -> dict[str, Any]:
        """The dataclass's own object at the top, with extra (derived) fields added."""
        self.of(cls)
        top = dict(self.defs.pop(cls.__name__))
        top["properties"] = {**top["properties"], **extra}
        top["required"] = list(top["properties"])
        return top


def document(name: str, title: str, body: dict[str, Any], defs: Mapping[str, Any] = {}) -> dict[str, Any]:
    doc = {"$schema": DRAFT, "$id": f"{BASE}{name}.schema.json", "title": title, **body}
    if defs:
        doc["$defs"] = dict(sorted(defs.items()))
    return doc


def error_kinds() -> list[str]:
    """Every typed error's kind (runner/errors.py and the farm's store), and the CLI's own."""
    from ..errors import ReplayError
    from ..farm import store  # noqa: F401  (defines the farm's history error)

    kinds: set[str] = {"usage", "interrupted", "internal"}
    todo: list[type[ReplayError]] = [ReplayError]
    while todo:
        cls = todo.pop()
        kinds.add(str(cls.kind))
        todo.extend(cls.__subclasses__())
    return sorted(kinds)


def envelope() -> dict[str, Any]:
    error = obj({"kind": {"enum": error_kinds()},
                 "message": STR, "file": nullable(STR)})
    body = obj({"schema": {"type": "string", "pattern": r"^replay\.[a-z]+(-[a-z]+)*/[0-9]+$"},
                "command": {"type": "string", "pattern": r"^[a-z]+( [a-z]+)?$"},
                "exit_code": {"type": "integer", "minimum": 0, "maximum": 255}, "result": {}, "error": nullable(error)})
    body["additionalProperties"] = False
    return document("envelope", "replay --json envelope", body)


def run() -> dict[str, Any]:
    from ..report import SCHEMA, ReplayReport

    d = Derive()
    top = d.root(ReplayReport, {"schema": {"const": SCHEMA}, "summary": STR})
    return document("run", "replay run --json result: the report", top, d.defs)


def inspect() -> dict[str, Any]:
    from ..capsules.model import Capsule

    d = Derive()
    return document("inspect", "replay inspect --json result: the capsule model", d.root(Capsule), d.defs)


def verify() -> dict[str, Any]:
    from ..capsules.verification import VerifyResult

    d = Derive()
    top = d.root(VerifyResult, {"valid": BOOL, "trusted": nullable(BOOL)})
    return document("verify", "replay verify --json result", top, d.defs)


def signature() -> dict[str, Any]:
    body = obj({"signature": STR,
                "key_lines": array(STR), "exit_code": nullable(INT), "signal": nullable(STR)})
    return document("signature", "replay signature --json result", body)


def render() -> dict[str, Any]:
    body = obj({"dockerfile": STR, "builder": {"enum": ["classic", "buildkit"]}, "notes": array(STR),
                "context": nullable(STR), "build_line": nullable(STR), "run_line": nullable(STR)})
    return document("render", "replay render --json result", body)


def diff() -> dict[str, Any]:
    outcome = obj({"failed": BOOL, "exit_code": nullable(INT), "signal": nullable(STR), "signature": nullable(STR)})
    side = obj({"path": STR, "format": STR, "outcome": outcome})
    fact = obj({"key": STR, "group": STR, "a": {}, "b": {}, "a_shown": STR, "b_shown": STR,
                "could_change_outcome": BOOL, "note": nullable(STR)})
    lone = obj({"key": STR, "group": STR, "recorded_in": {"enum": ["a", "b"]}, "value": {}, "shown": STR,
                "note": STR})
    caveat = obj({"key": STR, "a": {}, "b": {}, "note": STR})
    step = obj({"argv": nullable(array(STR)), "command": nullable(STR), "why": STR})
    body = obj({"a": side, "b": side, "differ": BOOL, "outcome_keys": array(STR), "differences": array(fact),
                "not_comparable": array(lone), "equal_without_values": array(caveat), "next": step})
    return document("diff", "replay diff --json result", body)


def bisect() -> dict[str, Any]:
    from ..bisect.commits import Commit, CommitsResult
    from ..bisect.search import BisectResult
    from ..bisect.sweep import SweepResult
    from ..replay.keep import Kept

    d = Derive()
    where = {"bad": STR, "good": STR, "kept": nullable(d.of(Kept))}
    facts = d.root(BisectResult, {**where, "mode": {"const": "facts"}, "also_failing": array(INT),
                                  "variant_builds": INT})
    commits = d.root(CommitsResult, {**where, "mode": {"const": "commits"}, "first_failing": nullable(d.of(Commit))})
    sweep = d.root(SweepResult, {**where, "mode": {"const": "sweep"}, "summary": STR})
    return document("bisect", "replay bisect --json result", {"oneOf": [facts, commits, sweep]}, d.defs)


def _night(d: Derive) -> dict[str, Any]:
    return obj({"id": STR, "started_at": STR, "finished_at": nullable(STR), "ref": nullable(STR),
                "sources": array(STR), "capsules": INT, "images": INT, "builds": INT,
                "counts": {"type": "object", "additionalProperties": INT}})


def farm_run() -> tuple[dict[str, Any], Derive]:
    from ..farm.model import CapsuleResult

    d = Derive()
    body = obj({"night": _night(d), "results": array(d.of(CapsuleResult))})
    return document("farm-run", "replay farm run --json result", body, d.defs), d


def farm_report() -> dict[str, Any]:
    from ..farm.model import Transition

    run_doc, d = farm_run()
    one_night = {k: v for k, v in run_doc.items() if k in ("type", "properties", "required")}
    from ..farm.attention import GROUPS

    row = obj({"capsule_id": STR, "path": STR, "group": {"enum": list(GROUPS)}, "verdict": STR,
               "standing": STR, "held_nights": INT, "not_applied": array(STR),
               "signature": nullable(STR), "ref_verdict": nullable(STR), "in_last_night": BOOL,
               "first_seen": obj({"night_id": STR, "started_at": STR}),
               "last_change": obj({"night_id": STR, "started_at": STR, "from": STR, "to": STR}),
               "rate": nullable(obj({"failed": INT, "runs": INT, "low": NUM, "high": NUM, "confidence": NUM,
                                     "nights": INT})),
               "strip": array(nullable(STR)), "command": STR})
    body = obj({"nights": array(_night(d)), "window": INT, "fixed_after": INT,
                "groups": obj({g: INT for g in GROUPS}), "rows": array(row),
                "since_last_night": array(d.of(Transition)), "last_night": nullable(one_night)})
    return document("farm-report", "replay farm report --json result", body, d.defs)


def farm_history() -> dict[str, Any]:
    from ..farm.model import CapsuleResult

    d = Derive()
    body = obj({"capsule_id": nullable(STR), "path": nullable(STR), "matched": STR,
                "nights": array(d.of(CapsuleResult))})
    return document("farm-history", "replay farm history --json result", body, d.defs)


def doctor() -> dict[str, Any]:
    from ..config import Origin
    from ..machine.doctor import Check

    d = Derive()
    body = obj({"ready": BOOL, "versions": {"type": "object", "additionalProperties": nullable(STR)},
                "checks": array(d.of(Check)), "settings": array(d.of(Origin))})
    return document("doctor", "replay doctor --json result", body, d.defs)


def gc() -> dict[str, Any]:
    from ..machine.gc import Leftover
    from ..machine.disk import Sweep

    d = Derive()
    body = obj({"dry_run": BOOL, "leftovers": array(d.of(Leftover)), "problems": array(STR),
                "images": nullable(d.of(Sweep)), "cache": nullable(d.of(Sweep)), "freed": INT})
    return document("gc", "replay gc --json result", body, d.defs)


def capture() -> dict[str, Any]:
    body = obj({"written": nullable(STR), "failed": BOOL, "exit_code": nullable(INT), "signal": nullable(STR),
                "signature": nullable(STR), "redacted": {"type": "object", "additionalProperties": INT},
                "diff_omitted": array(STR), "values_not_recorded": array(STR)})
    return document("capture", "replay capture --json result (the envelope's exit_code is the command's own)", body)


def pin() -> dict[str, Any]:
    from ..pinning.pinsearch import PinResult

    d = Derive()
    return document("pin", "replay pin --json result", d.root(PinResult), d.defs)


# Each result schema, by the name its command's declaration gives (runner/commands/catalog.py).
RESULTS = {"run": run, "inspect": inspect, "diff": diff, "verify": verify, "signature": signature, "render": render,
           "bisect": bisect, "farm-run": lambda: farm_run()[0], "farm-report": farm_report,
           "farm-history": farm_history, "doctor": doctor, "gc": gc, "capture": capture,
           "pin": pin}


def all_documents() -> dict[str, dict[str, Any]]:
    """File name -> schema, for every command's --json and the envelope."""
    from . import COMMANDS

    missing = sorted(set(COMMANDS) - set(RESULTS))
    if missing:
        raise KeyError(f"no result schema for {', '.join(missing)}")
    docs = {"envelope": envelope(), **{name: RESULTS[name]() for name in COMMANDS}}
    return {f"{name}.schema.json": doc for name, doc in docs.items()}


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    for name, doc in all_documents().items():
        (HERE / name).write_text(text(doc), encoding="utf-8")
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
