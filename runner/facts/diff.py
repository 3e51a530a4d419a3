"""Compare the environments of two capsules, fact by fact, under stable keys.

A fact is one thing a recorder observed about the environment ("runtime:node",
"env:TZ"), under the keys of facts/factkeys.py, the ones bisect varies.
Recorded outcomes (exit code, duration, signature, outputs, ids, provenance) are
what a replay is judged against, not environment, so they never appear here.

A fact one format does not record at all is "not comparable" and never counts as a
difference: twin records no HTTP calls, NovaFabric no distro.
"""
from __future__ import annotations

import hashlib
import shlex
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..capsules.model import Capsule, PackageManager, Platform
from ..verdict.judge import Expected, expected_of
from .inspect import env_shown, http_line, not_recorded, records

from . import nextstep
from .diffrank import rank, replace_bearing
from .factkeys import GROUPS, group_of, lock, pin, tool


@dataclass(frozen=True)
class FactDiff:
    key: str
    a: str  # as shown
    b: str
    could_change_outcome: bool
    note: str | None = None
    a_value: Any = None  # as data (--json): None when absent, booleans as booleans
    b_value: Any = None
    score: int = 0  # the evidence that it bears on the outcome (diffrank.py)
    evidence: str = ""
    follows: str | None = None  # the difference it follows from (tools under a moved HOME)

    @property
    def group(self) -> str:
        return group_of(self.key)


@dataclass(frozen=True)
class NotComparable:
    key: str
    recorded_in: Literal["a", "b"]
    value: str  # as shown
    note: str
    data: Any = None  # as data (--json)

    @property
    def group(self) -> str:
        return group_of(self.key)


@dataclass(frozen=True)
class Caveat:
    """A fact that compares equal only because one side did not record its value."""

    key: str
    note: str
    a_value: Any = None
    b_value: Any = None


@dataclass(frozen=True)
class CapsuleDiff:
    differences: tuple[FactDiff, ...] = ()
    not_comparable: tuple[NotComparable, ...] = ()
    caveats: tuple[Caveat, ...] = ()

    @property
    def differ(self) -> bool:
        """Does anything differ that could change the outcome?"""
        return any(d.could_change_outcome for d in self.differences)

    @property
    def outcome_keys(self) -> tuple[str, ...]:
        """The keys a bisect would search over."""
        return tuple(d.key for d in self.differences if d.could_change_outcome)

    def grouped(self) -> tuple[tuple[str, tuple[FactDiff, ...]], ...]:
        groups = ((g, tuple(d for d in self.differences if d.group == g)) for g in GROUPS)
        return tuple((g, ds) for g, ds in groups if ds)


class _Unknown:
    """A part of a fact that is present but whose value was not recorded."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class _Hash:
    """A salted value hash: only comparable with another hash, never with a value."""

    hex: str


@dataclass(frozen=True)
class _Fact:
    shown: str
    raw: tuple[Hashable, ...]  # compared part by part; UNKNOWN parts match anything
    could_change: bool = True
    note: str | None = None
    value: Any = None  # the fact as JSON data (--json): what `shown` shows, typed


_ABSENT = {"env": "(absent)", "pin": "(not installed)", "runtime": "(not found)", "tool": "(not found)",
           "lock": "(no lockfile)", "input": "(no such input)"}  # fmt: skip


def _missing(key: str) -> _Fact:
    """A fact this side records as not there (e.g. twin lists every runtime it found)."""
    prefix = key.split(":", 1)[0]
    # twin lists every variable except noise, so a missing one is an absent one.
    raw: tuple[Hashable, ...] = ("absent", None) if prefix == "env" else ()
    return _Fact(_ABSENT.get(prefix, "(none)"), raw)  # value None: absent

# Values that name the same thing differently across recorders (twin uses Node's names).
_ALIASES = {"x64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "win32": "windows"}
_INFO_ONLY = {
    "platform:release": "kernel release: a container runs on its host's kernel",
    "platform:cpu_count": "hardware size",
    "platform:memory_bytes": "hardware size",
    "source:remote": "the same commit can come from any remote",
    "source:branch": "the commit, not the branch name, is what ran",
    "command:host_cwd": "host path: replay maps it to the container's",
}


def _fact(key: str, shown: str, *raw: Hashable, value: Any = ...) -> tuple[str, _Fact]:
    """A fact; its JSON value is its only raw part unless given."""
    info = _INFO_ONLY.get(key)
    data = _plain(raw[0] if len(raw) == 1 else list(raw)) if value is ... else value
    return key, _Fact(shown, raw, info is None, info, data)


def _plain(value: Any) -> Any:
    """JSON data: tuples as lists, UNKNOWN as null."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return None if value is UNKNOWN else value


def _command(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    yield _fact("command:argv", shlex.join(c.command.argv), c.command.argv)
    if c.command.cwd is not None:
        # A repo-relative cwd and a host path are different facts: neither implies the other.
        key = "command:host_cwd" if c.command.cwd_is_host_path else "command:cwd"
        yield _fact(key, c.command.cwd, c.command.cwd)


def _platform(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for name in Platform.__dataclass_fields__:
        value = getattr(c.platform, name)
        if value is not None:
            yield _fact(f"platform:{name}", str(value), _ALIASES.get(str(value), value), value=value)


def _runtimes(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    versions = dict(c.runtimes)
    if c.python is not None and c.python.version and "python" not in versions:
        versions["python"] = c.python.version
    for name, version in versions.items():
        yield _fact(f"runtime:{name}", version, version)
    if c.python is not None and c.python.interpreter:
        yield _fact("python:interpreter", c.python.interpreter, c.python.interpreter)


def _managers(c: Capsule) -> tuple[PackageManager, ...]:
    """Package managers, with NovaFabric's Python one when the reader left it in PythonEnv."""
    py = c.python
    if py is None or py.package_manager in (None, "none"):
        return c.package_managers
    if any(p.name == py.package_manager for p in c.package_managers):
        return c.package_managers
    sha = (py.lock_file_sha256 or "").removeprefix("sha256:") or None
    lockfile = py.lock_file_ref or (py.lock_file_kind if py.lock_file_kind != "none" else None)
    extra = PackageManager(py.package_manager or "", "python", None, None, lockfile, sha)
    return (*c.package_managers, extra)


def _pms(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for pm in _managers(c):
        key = tool(pm.name)
        version = pm.version or c.tools.get(pm.name)
        if version is not None:  # a manager used at an unrecorded version tells nothing to compare
            yield _fact(key, version, version)
        if pm.declared is not None:
            yield _fact(f"{key}:declared", pm.declared, pm.declared)
        if pm.lockfile is not None or pm.lockfile_sha256 is not None:
            sha = pm.lockfile_sha256
            shown = f"{pm.lockfile or '(lockfile)'} sha256:{sha[:12]}" if sha else f"{pm.lockfile}"
            yield _fact(lock(pm.name), shown, sha or UNKNOWN, value={"path": pm.lockfile, "sha256": sha})


def _deps(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for name, versions in c.resolved.node.items():
        vs = tuple(sorted(set(versions)))
        yield _fact(pin("node", name), ", ".join(vs), vs)
    for name, version in c.resolved.python.items():
        yield _fact(pin("python", name), version, version)


def _repo(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    r = c.repo
    if r is None:
        return
    for name in ("remote", "commit", "branch", "dirty"):
        if getattr(r, name) is not None:
            yield _fact(f"source:{name}", str(getattr(r, name)), getattr(r, name))
    if r.diff is not None:
        data = r.diff.encode("utf-8", "surrogatepass")
        sha = hashlib.sha256(data).hexdigest()
        flags = "".join((", truncated" if r.diff_truncated else "", ", redacted" if r.diff_redacted else ""))
        shown = f"{len(data)} bytes, sha256:{sha[:12]}{flags}" if data else "(clean)"
        yield _fact("source:diff", shown, sha, r.diff_truncated,
                    value={"bytes": len(data), "sha256": sha, "truncated": r.diff_truncated,
                           "redacted": r.diff_redacted})
    if r.untracked:
        yield _fact("source:untracked", ", ".join(r.untracked), tuple(sorted(r.untracked)))


def _env(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for name, f in c.env.items():
        part: Hashable = None if f.state != "set" else f.value or (_Hash(f.hash) if f.hash else UNKNOWN)
        note = "host-specific: replay maps it, never copies it" if f.host_specific else None
        if f.value is None and f.hash:
            note = "salted hashes are equal only when recorded with the same salt"
        value = None if f.state == "absent" else {"state": f.state, "value": f.value, "hash": f.hash}
        yield f"env:{name}", _Fact(env_shown(f), (f.state, part), not f.host_specific, note, value)


def _locale(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    loc = c.locale
    pairs = (("timeZone", loc.time_zone), ("locale", loc.locale), ("lang", loc.lang), ("lc_all", loc.lc_all))
    for key, value in pairs:
        if value is not None:
            yield _fact(f"locale:{key}", value, value)


def _http(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    if not c.http_calls and not records(c, "http:calls"):
        return
    shown = "\n".join(http_line(call) for call in c.http_calls) or "(no calls)"
    # The program reads response bodies, so their content is part of the environment.
    raw = tuple(
        (
            call.request.method, call.request.url,
            call.response.status if call.response else (call.error.kind if call.error else None),
            None if call.response is None or call.response.body is None
            else hashlib.sha256(call.response.body.data).hexdigest(),
        )
        for call in c.http_calls
    )  # fmt: skip
    keys = ("method", "url", "status", "body_sha256")
    yield _fact("http:calls", shown, raw, value=[dict(zip(keys, call)) for call in raw])


def _inputs(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for art in c.inputs:
        shown = f"sha256:{art.sha256[:12]}" if art.sha256 else "(content hash not recorded)"
        yield _fact(f"input:{art.logical_path}", shown, art.sha256 or UNKNOWN)


def _tools(c: Capsule) -> Iterator[tuple[str, _Fact]]:
    for name, version in c.tools.items():
        yield _fact(f"tool:{name}", version, version)


_EXTRACTORS = (_command, _platform, _runtimes, _tools, _pms, _deps, _repo, _env, _locale, _http, _inputs)


def facts(c: Capsule) -> dict[str, _Fact]:
    out: dict[str, _Fact] = {}
    for extract in _EXTRACTORS:
        out.update(extract(c))
    return out


def _compare(a: _Fact, b: _Fact) -> tuple[bool, bool]:
    """(equal, equal only because a value is missing on one side)."""
    if len(a.raw) != len(b.raw):
        return False, False
    unsure = False
    for x, y in zip(a.raw, b.raw):
        if x is UNKNOWN or y is UNKNOWN or isinstance(x, _Hash) != isinstance(y, _Hash):
            unsure = True
        elif x != y:
            return False, False
    return True, unsure


def _covers(c: Capsule, mine: dict[str, _Fact], key: str) -> bool:
    """Is the key's presence or absence something this capsule records?"""
    if key in mine:
        return True
    if key.startswith("pin:"):
        # An ecosystem with no packages at all was not looked at (twin writes the map only when found).
        eco = key.split(":")[1]
        return any(k.startswith(f"pin:{eco}:") for k in mine)
    return records(c, key)


def _order(key: str) -> tuple[int, str]:
    return GROUPS.index(group_of(key)), key


def diff_capsules(a: Capsule, b: Capsule) -> CapsuleDiff:
    fa, fb = facts(a), facts(b)
    diffs: list[FactDiff] = []
    lone: list[NotComparable] = []
    caveats: list[Caveat] = []
    for key in sorted(fa.keys() | fb.keys(), key=_order):
        if not (_covers(a, fa, key) and _covers(b, fb, key)):
            side: Literal["a", "b"] = "a" if key in fa else "b"
            shown = (fa if side == "a" else fb)[key].shown
            lone.append(NotComparable(key, side, shown, not_recorded(b if side == "a" else a, key),
                                      (fa if side == "a" else fb)[key].value))
            continue
        x, y = fa.get(key) or _missing(key), fb.get(key) or _missing(key)
        equal, unsure = _compare(x, y)
        if not equal:
            diffs.append(FactDiff(key, x.shown, y.shown, x.could_change and y.could_change, x.note or y.note,
                                  x.value, y.value))
        elif unsure:
            caveats.append(Caveat(key, f"compared equal without values: A {x.shown}, B {y.shown}", x.value, y.value))
    return CapsuleDiff(tuple(rank(diffs, a, b, replace_bearing)), _collapse(tuple(lone), fa, fb), tuple(caveats))


def _collapse(
    lone: tuple[NotComparable, ...], fa: dict[str, _Fact], fb: dict[str, _Fact]
) -> tuple[NotComparable, ...]:
    """One entry per ecosystem instead of thousands of packages the other side never looked at."""
    out: list[NotComparable] = []
    seen: set[str] = set()
    for nc in lone:
        if not nc.key.startswith("pin:"):
            out.append(nc)
            continue
        family = ":".join(nc.key.split(":")[:2])
        if family not in seen:
            seen.add(family)
            count = sum(1 for k in (fa if nc.recorded_in == "a" else fb) if k.startswith(family + ":"))
            out.append(NotComparable(family, nc.recorded_in, f"{count} packages", nc.note, count))
    return tuple(out)


def outcome_of(c: Capsule) -> dict[str, Any]:
    """A capsule's recorded outcome, as data: what a replay of it is judged against."""
    e: Expected = expected_of(c)
    return {"failed": e.failed, "exit_code": e.exit_code, "signal": e.signal, "signature": e.signature}


def next_step(a: Capsule, b: Capsule, d: CapsuleDiff, carry: Sequence[str] = ()) -> tuple[list[str] | None, str]:
    """The command to run next, and why (nextstep.py); `carry`: the options the diff was given."""
    return nextstep.next_step(a, b, d.outcome_keys, carry)


def diff_to_data(d: CapsuleDiff, a: Capsule, b: Capsule, carry: Sequence[str] = ()) -> dict[str, Any]:
    """The --json result: both capsules, then every differing key with its values as data."""
    argv, why = next_step(a, b, d, carry)
    return {
        "a": {"path": a.provenance.path, "format": a.provenance.format.value, "outcome": outcome_of(a)},
        "b": {"path": b.provenance.path, "format": b.provenance.format.value, "outcome": outcome_of(b)},
        "differ": d.differ,
        "outcome_keys": list(d.outcome_keys),
        "differences": [{"key": f.key, "group": f.group, "a": f.a_value, "b": f.b_value, "a_shown": f.a,
                         "b_shown": f.b, "could_change_outcome": f.could_change_outcome, "note": f.note,
                         "score": f.score, "evidence": f.evidence, "follows": f.follows}
                        for f in d.differences],
        "not_comparable": [{"key": n.key, "group": n.group, "recorded_in": n.recorded_in, "value": n.data,
                            "shown": n.value, "note": n.note} for n in d.not_comparable],
        "equal_without_values": [{"key": c.key, "a": c.a_value, "b": c.b_value, "note": c.note} for c in d.caveats],
        "next": {"argv": argv, "command": shlex.join(argv) if argv else None, "why": why},
    }
