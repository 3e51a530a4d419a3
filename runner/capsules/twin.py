"""Reader for twin capsules (format v1): one JSON file with an integer ``"twin"`` member.

The shapes follow the seed's field tables; members twin does not document are
ignored, so a newer twin that only adds members still reads.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import CapsuleError, UnsupportedVersion
from .jsonload import (
    BOOLEAN, INTEGER, LIST, NUMBER, OBJECT, STRING, STRINGS, Kind, Shape, describe, is_integer, load, member_path,
    one_of, sniff, find_lone_surrogate,
)
from .model import (
    HOST_SPECIFIC_ENV,
    Capsule, Command, EnvFact, Failure, Format, FrozenMap, Locale, PackageManager, Pin, Platform, Provenance,
    Redaction, Repo, Resolved,
)
from . import limits
from .scope import Scope, pm_keys
from .verification import VerifyResult
from ..verdict import signature as sig
from ..verdict.seeds import setting_problem

FORMAT = Format.TWIN
SCOPE = Scope(
    frozenset({"platform", "runtimes", "tools", "package managers", "resolved packages", "repo", "env",
               "locale", "redaction"}),
    ("command:argv", "command:cwd", "platform:os", "platform:arch", "platform:release", "platform:distro*",
     "platform:libc*", "runtime:*", "tool:*", "source:*", "env:*", "locale:timeZone", "locale:locale",
     *pm_keys("npm", "pnpm", "yarn", "bun", "uv", "poetry", "pipenv", "cargo", "go")),
    # twin leaves session noise out of env, so its absence there says nothing.
    ("env:HOME", "env:USER", "env:USERNAME", "env:LOGNAME", "env:SHELL", "env:PWD", "env:OLDPWD",
     "env:SHLVL", "env:TERM_*", "env:COLORTERM", "env:DISPLAY", "env:WAYLAND_*", "env:DBUS_*",
     "env:SSH_*", "env:XDG_*", "env:npm_*", "env:_"),
)  # fmt: skip
UNDERSTOOD = 1
# Values that describe the recording host, not the project: a replay maps them to
# the container's own instead of copying them.
_STRING_LISTS = Kind("an object of string lists", STRINGS.test)


def detect(path: Path) -> Any | None:
    doc = sniff(path)
    return doc if claims(doc) else None


def claims(doc: Any) -> bool:
    """A parsed JSON document that says it is a twin capsule."""
    return isinstance(doc, dict) and is_integer(doc.get("twin"))


def read(path: Path, parsed: Any = None) -> Capsule:
    """The capsule as the model; CapsuleError naming the first bad member."""
    shape = Shape()
    capsule = _capsule(path, _document(path, parsed), shape)
    shape.raise_errors(path)
    return capsule


def verify(path: Path, trust_keys: Sequence[Path] = (), parsed: Any = None) -> VerifyResult:
    """Every structural problem, then (on a well-formed capsule) consistency checks.

    twin capsules are not signed, so ``trust_keys`` has nothing to check.
    """
    shape = Shape()
    capsule = _capsule(path, _document(path, parsed), shape)
    checks = ["JSON syntax", "format version", "structure and types"]
    if not shape.errors:
        _check(capsule, shape)
        checks.append("consistency")
    return VerifyResult(format=FORMAT.value, path=str(path), problems=tuple(shape.problems), checks=tuple(checks))


def _document(path: Path, parsed: Any) -> Any:
    doc = load(path) if parsed is None else parsed
    if not isinstance(doc, dict) or not is_integer(doc.get("twin")):
        raise CapsuleError(path, 'not a twin capsule (no integer "twin" member)')
    version = int(doc["twin"])
    if version > UNDERSTOOD:
        raise UnsupportedVersion(path, f"v{version}", f"v{UNDERSTOOD}", "twin")
    if version < 1:
        raise CapsuleError(path, f"twin: unknown format version {version}")
    limits.check(path, doc, limits.TWIN_RULES, limits.TWIN_LONG)  # before any work that grows with them
    where = find_lone_surrogate(doc)
    if where is not None:
        # Node decodes what it records from UTF-8 (bad bytes become U+FFFD), so twin never writes
        # one; a capsule holding one was made by hand, and no program could receive the text.
        raise CapsuleError(path, f"{where}: holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not text")
    return doc


def _capsule(path: Path, doc: dict[str, Any], s: Shape) -> Capsule:
    return Capsule(
        provenance=Provenance(
            format=FORMAT,
            format_version=str(int(doc["twin"])),
            path=str(path),
            generator=s.get(doc, "", "generator", STRING),
            created_at=s.get(doc, "", "createdAt", STRING),
        ),
        command=_command(s, s.get(doc, "", "command", OBJECT)),
        platform=_platform(s, s.get(doc, "", "os", OBJECT)),
        runtimes=FrozenMap(s.entries(doc, "", "runtimes", STRING)),
        tools=FrozenMap(s.entries(doc, "", "tools", STRING)),
        package_managers=_package_managers(s, s.get(doc, "", "packageManagers", LIST)),
        resolved=_resolved(s, s.get(doc, "", "resolved", OBJECT)),
        repo=_repo(s, s.get(doc, "", "repo", OBJECT, nullable=True)),
        env=_env(s, s.entries(doc, "", "env", OBJECT)),
        locale=_locale(s, s.get(doc, "", "locale", OBJECT)),
        redaction=_redaction(s, s.get(doc, "", "redaction", OBJECT)),
        pin=_pin(s, s.get(doc, "", "pin", OBJECT, optional=True)),
    )


def _pin(s: Shape, pin: Any) -> Pin | None:
    """replay's own member (`replay pin -o`): the settings that pinned the failure, each checked here."""
    if pin is None:
        return None
    settings = s.entries(pin, "pin", "settings", STRING)
    for name, value in settings.items():
        problem = setting_problem(name, value)
        if problem is not None:
            s.error(member_path("pin.settings", name), problem)
    failed, runs = s.get(pin, "pin", "failed", INTEGER), s.get(pin, "pin", "runs", INTEGER)
    return Pin(FrozenMap(settings), int(failed or 0), int(runs or 0))


def _command(s: Shape, cmd: Any) -> Command:
    w = "command"
    argv = tuple(s.get(cmd, w, "argv", STRINGS) or ())  # read in document order, for the report
    cwd = s.get(cmd, w, "cwd", STRING)
    exit_code = s.get(cmd, w, "exitCode", INTEGER, nullable=True)
    signal = s.get(cmd, w, "signal", STRING, nullable=True)
    duration = s.get(cmd, w, "durationMs", NUMBER)
    return Command(
        argv=argv,
        cwd=cwd,
        exit_code=None if exit_code is None else int(exit_code),
        signal=signal,
        outcome=s.get(cmd, w, "outcome", one_of("pass", "fail")),
        duration_ms=None if duration is None else float(duration),
        # twin omits or nulls `failure` on a pass; verify checks it matches the outcome.
        failure=_failure(s, s.get(cmd, w, "failure", OBJECT, optional=True, nullable=True)),
        cached_by=s.get(cmd, w, "resultCached", one_of("go test"), optional=True, nullable=True),
    )


def _failure(s: Shape, failure: Any) -> Failure | None:
    if failure is None:
        return None
    w = "command.failure"
    return Failure(
        signature=s.get(failure, w, "signature", STRING),
        key_lines=tuple(s.get(failure, w, "keyLines", STRINGS) or ()),
        output_tail=s.get(failure, w, "outputTail", STRING),
    )


def _platform(s: Shape, os_: Any) -> Platform:
    def text(key: str, nullable: bool = False) -> str | None:
        value: str | None = s.get(os_, "os", key, STRING, nullable=nullable)
        return value

    return Platform(
        os=text("platform"),
        arch=text("arch"),
        release=text("release"),
        distro=text("distro", True),
        distro_version=text("distroVersion", True),
        libc=s.get(os_, "os", "libc", one_of("glibc", "musl"), nullable=True),
        libc_version=text("libcVersion", True),
    )


def _package_managers(s: Shape, items: Any) -> tuple[PackageManager, ...]:
    found = []
    for i, item in enumerate(items or ()):
        if isinstance(item, dict):
            found.append(_package_manager(s, item, f"packageManagers[{i}]"))
        else:
            s.error(f"packageManagers[{i}]", f"expected an object, got {describe(item)}")
    return tuple(found)


def _package_manager(s: Shape, item: dict[str, Any], w: str) -> PackageManager:
    sha = s.get(item, w, "lockfileSha256", STRING, nullable=True)
    return PackageManager(
        name=s.get(item, w, "name", STRING) or "",
        ecosystem=s.get(item, w, "ecosystem", one_of("node", "python", "rust", "go")),
        version=s.get(item, w, "version", STRING, nullable=True),
        declared=s.get(item, w, "declared", STRING, nullable=True),
        lockfile=s.get(item, w, "lockfile", STRING, nullable=True),
        lockfile_sha256=None if sha is None else sha.lower(),
    )


def _resolved(s: Shape, resolved: Any) -> Resolved:
    node = s.entries(resolved, "resolved", "node", _STRING_LISTS, optional=True)
    python = s.entries(resolved, "resolved", "python", STRING, optional=True)
    return Resolved(
        node=FrozenMap((name, tuple(versions)) for name, versions in node.items()),
        python=FrozenMap(python),
    )


def _repo(s: Shape, repo: Any) -> Repo | None:
    if repo is None:
        return None
    w = "repo"
    return Repo(
        remote=s.get(repo, w, "remote", STRING, nullable=True),
        commit=s.get(repo, w, "commit", STRING, nullable=True),
        branch=s.get(repo, w, "branch", STRING, nullable=True),
        dirty=s.get(repo, w, "dirty", BOOLEAN),
        diff=s.get(repo, w, "diff", STRING),
        diff_truncated=bool(s.get(repo, w, "diffTruncated", BOOLEAN)),
        diff_redacted=bool(s.get(repo, w, "diffRedacted", BOOLEAN)),
        untracked=tuple(s.get(repo, w, "untracked", STRINGS) or ()),
    )


def _env(s: Shape, facts: dict[str, Any]) -> FrozenMap[str, EnvFact]:
    env = {}
    for name, fact in facts.items():
        w = member_path("env", name)
        state = s.get(fact, w, "state", one_of("set", "empty", "absent"))
        if state is None:
            continue
        env[name] = EnvFact(
            name=name,
            state=state,
            value=s.get(fact, w, "value", STRING, optional=True),
            hash=s.get(fact, w, "hash", STRING, optional=True),
            host_specific=name in HOST_SPECIFIC_ENV,
        )
    return FrozenMap(env)


def _locale(s: Shape, locale: Any) -> Locale:
    return Locale(
        time_zone=s.get(locale, "locale", "timeZone", STRING, nullable=True),
        locale=s.get(locale, "locale", "locale", STRING, nullable=True),
    )


def _redaction(s: Shape, red: Any) -> Redaction | None:
    if red is None:
        return None
    w = "redaction"
    version = s.get(red, w, "rulesVersion", INTEGER)
    return Redaction(
        rules_version=None if version is None else int(version),
        values_included=tuple(s.get(red, w, "valuesIncluded", STRINGS) or ()),
        hashed_values=s.get(red, w, "hashedValues", BOOLEAN),
        scrubbed=FrozenMap((k, int(v)) for k, v in s.entries(red, w, "scrubbed", INTEGER).items()),
    )


# --- consistency (verify only): cheap checks that the facts agree with each other --

_SIGNATURE = re.compile(r"(exit-?[0-9]+|SIG[A-Z0-9]+):([0-9a-f]{16})")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_HMAC = re.compile(r"[0-9a-f]{32}")
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _check(c: Capsule, s: Shape) -> None:
    _check_ending(c.command, s)
    if c.command.failure is not None:
        _check_signature(c.command, c.command.failure, s)
    _check_env(c, s)
    for i, pm in enumerate(c.package_managers):
        if pm.lockfile_sha256 is not None and not _SHA256.fullmatch(pm.lockfile_sha256):
            s.error(f"packageManagers[{i}].lockfileSha256", "expected 64 hex characters (SHA-256)")
    if c.repo is not None and c.repo.commit is not None and not _COMMIT.fullmatch(c.repo.commit):
        s.error("repo.commit", "expected a hex commit id")
    if c.repo is not None and c.repo.dirty is False and (c.repo.diff or c.repo.untracked):
        s.add("warning", "repo.dirty", "false, yet a diff or untracked files are recorded")
    try:
        datetime.fromisoformat(c.provenance.created_at or "")
    except ValueError:
        s.error("createdAt", "expected an ISO 8601 time")


def _check_ending(cmd: Command, s: Shape) -> None:
    if (cmd.exit_code is None) == (cmd.signal is None):
        s.error("command", "exactly one of exitCode and signal must be set (exitCode is null when a signal ended the run)")
        return
    should_fail = cmd.signal is not None or cmd.exit_code != 0
    ending = f"signal is {cmd.signal}" if cmd.signal else f"exitCode is {cmd.exit_code}"
    if (cmd.outcome == "fail") != should_fail:
        s.error("command.outcome", f'"{cmd.outcome}" but {ending}')
    if cmd.outcome == "fail" and cmd.failure is None:
        s.error("command.failure", 'missing although outcome is "fail"')
    if cmd.outcome == "pass" and cmd.failure is not None:
        s.error("command.failure", 'present although outcome is "pass"')


def _check_signature(cmd: Command, failure: Failure, s: Shape) -> None:
    where = "command.failure.signature"
    match = _SIGNATURE.fullmatch(failure.signature or "")
    if match is None:
        s.error(where, f"expected exit<code> or a signal name, ':' and 16 hex characters, got {failure.signature!r}")
        return
    expected_prefix = cmd.signal or f"exit{cmd.exit_code}"
    if match.group(1) != expected_prefix:
        s.error(where, f"starts with {match.group(1)!r} but the run ended with {expected_prefix!r}")
    digest = sig.digest(failure.key_lines)
    if match.group(2) != digest:
        # An older twin may have hashed differently; replay recomputes from outputTail then.
        s.add("warning", where, f"hash {match.group(2)} is not that of keyLines ({digest})")
    if len(failure.key_lines) > 12:
        s.add("warning", "command.failure.keyLines", f"{len(failure.key_lines)} lines; twin records at most 12")


def _check_env(c: Capsule, s: Shape) -> None:
    included = set(c.redaction.values_included) if c.redaction else set()
    for name, fact in c.env.items():
        where = member_path("env", name)
        if fact.state == "absent" and (fact.value is not None or fact.hash is not None):
            s.error(where, "absent, yet a value or hash is recorded")
        if fact.state == "empty" and fact.value:
            s.error(where + ".value", 'not empty although the state is "empty"')
        if fact.hash is not None and not _HMAC.fullmatch(fact.hash):
            s.error(where + ".hash", "expected 32 hex characters")
        if fact.value is not None and name not in included:
            s.add("warning", where + ".value", "recorded but not listed in redaction.valuesIncluded")
