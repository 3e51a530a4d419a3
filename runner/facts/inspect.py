"""What a capsule records, as grouped sections for display (pure functions).

What each format records at all is its reader's to say (`SCOPE`, capsules/scope.py): a
group a format never records reads "not recorded by this format" instead of looking empty,
and `diff` can tell "not recorded" from "recorded as not there".
"""
from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from fnmatch import fnmatchcase

from ..textsafe import cell
from ..capsules import scope_of
from ..capsules.model import Artifact, Body, Capsule, EnvFact, HttpCall, Platform

NOT_RECORDED = "not recorded by this format"
NONE_RECORDED = "none recorded"
DEFAULT_LIMIT = 20


# twin lists TERM, with its value, since its rules version 2 (its value allowlist); version 1
# left it out as terminal noise, so there its absence says nothing.
_TWIN_RULES_2 = frozenset({"env:TERM"})


def records(c: Capsule, key: str) -> bool:
    """Does this capsule's format record the fact key even when it is missing?"""
    scope = scope_of(c.provenance.format)
    if any(fnmatchcase(key, p) for p in scope.unless) or _before_twin_rules_2(c, key):
        return False
    return any(fnmatchcase(key, p) for p in scope.absence)


def _before_twin_rules_2(c: Capsule, key: str) -> bool:
    version = c.redaction.rules_version if c.redaction is not None else None
    return key in _TWIN_RULES_2 and c.provenance.format.value == "twin" and (version or 1) < 2


def not_recorded(c: Capsule, key: str) -> str:
    """Why `c` says nothing of the fact key, in a few words."""
    if _before_twin_rules_2(c, key):
        return f"twin records {key.removeprefix('env:')}'s value since its rules version 2; this capsule's are older"
    return f"{c.provenance.format.value} does not record it"


def records_group(c: Capsule, group: str) -> bool:
    """Does this capsule's format record this kind of fact at all?"""
    return group in scope_of(c.provenance.format).groups


def printable(text: str) -> str:
    """One table cell or line of a capsule's text: control characters, newlines and Unicode line
    separators escaped (a capsule is untrusted and must not drive the terminal, nor turn one
    cell into two rows), lone surrogates too, and huge values cut."""
    return cell(text)


def env_shown(f: EnvFact) -> str:
    if f.state != "set":
        return f"({f.state})"
    if f.value is not None:
        return f.value
    return f"hash:{f.hash}" if f.hash else "(value not recorded)"


def http_line(call: HttpCall) -> str:
    """`GET url -> 200 OK (42 B)` or `GET url -> error dns`."""
    if call.response is not None:
        r = call.response
        end = f"{r.status} {r.reason}".rstrip() + (f" ({len(r.body.data)} B)" if r.body else "")
    else:
        end = f"error {call.error.kind}" if call.error else "no response"
    return f"{call.request.method} {call.request.url} -> {end}"


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    flag: str | None = None  # e.g. "host-specific"


@dataclass(frozen=True)
class Section:
    title: str
    rows: tuple[Row, ...]
    empty: str | None = None  # why there are no rows: NOT_RECORDED or NONE_RECORDED


def _rows(pairs: Iterable[tuple[str, object]]) -> tuple[Row, ...]:
    """Rows for the values that were recorded (None means not recorded)."""
    return tuple(Row(label, _text(value)) for label, value in pairs if value is not None)


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _body(body: Body | None) -> str | None:
    return None if body is None else f"{len(body.data)} bytes recorded"


def _command(c: Capsule) -> tuple[Row, ...]:
    cmd = c.command
    cwd = None if cmd.cwd is None else cmd.cwd + (" (host path)" if cmd.cwd_is_host_path else "")
    pin = None if c.pin is None else (" ".join(f"{k}={v}" for k, v in c.pin.settings.items())
                                      + f" (the recorded failure came back in {c.pin.failed} of {c.pin.runs} runs)")
    return _rows((("argv", shlex.join(cmd.argv)), ("cwd", cwd), ("working directory", c.working_directory),
                  ("pin", pin)))


def _outcome(c: Capsule) -> tuple[Row, ...]:
    cmd, failure = c.command, c.command.failure
    rows = _rows((
        ("outcome", cmd.outcome), ("exit code", cmd.exit_code), ("signal", cmd.signal), ("status", cmd.status),
        ("duration", None if cmd.duration_ms is None else f"{cmd.duration_ms:g} ms"),
        ("error", None if cmd.error_type is None else f"{cmd.error_type}: {cmd.error_message or '-'}"),
        ("stdout", _body(cmd.stdout)), ("stderr", _body(cmd.stderr)),
        ("signature", failure.signature if failure else None),
    ))  # fmt: skip
    if failure is not None:
        rows += tuple(Row("key line", line) for line in failure.key_lines)
        if failure.output_tail is not None:
            rows += (Row("output tail", f"{len(failure.output_tail.splitlines())} lines recorded"),)
    return rows


def _platform(c: Capsule) -> tuple[Row, ...]:
    return _rows((f.name.replace("_", " "), getattr(c.platform, f.name)) for f in fields(Platform))


def _runtimes(c: Capsule) -> tuple[Row, ...]:
    rows = _rows(c.runtimes.items())
    py = c.python
    if py is not None:
        if "python" not in c.runtimes:
            rows += _rows((("python", py.version),))
        rows += _rows((("python interpreter", py.interpreter),))
    return rows


def _tools(c: Capsule) -> tuple[Row, ...]:
    return _rows(c.tools.items())


def _package_managers(c: Capsule) -> tuple[Row, ...]:
    rows: list[Row] = []
    for pm in c.package_managers:
        bits = [pm.version or "version not recorded"]
        bits += [f"declared {pm.declared}"] if pm.declared else []
        bits += [f"lockfile {pm.lockfile}"] if pm.lockfile else []
        bits += [f"sha256:{pm.lockfile_sha256}"] if pm.lockfile_sha256 else []
        rows.append(Row(pm.name + (f" ({pm.ecosystem})" if pm.ecosystem else ""), ", ".join(bits)))
    py = c.python
    if py is not None:
        # The reader may already list this manager above; only what it adds is shown here.
        listed = any(pm.name == py.package_manager for pm in c.package_managers)
        rows += _rows((("python package manager", None if listed else py.package_manager),
                       ("python lock file", py.lock_file_kind), ("python lock file ref", py.lock_file_ref),
                       ("python lock file sha256", None if listed else py.lock_file_sha256)))
    return tuple(rows)


def _resolved(c: Capsule, full: bool, limit: int) -> tuple[Row, ...]:
    rows: list[Row] = []
    node = {name: ", ".join(versions) for name, versions in c.resolved.node.items()}
    ecosystems = (("node", node), ("python", dict(c.resolved.python)))
    for eco, packages in ecosystems:
        if not packages:
            continue
        shown = sorted(packages.items()) if full else sorted(packages.items())[:limit]
        rows.append(Row(f"{eco} packages", str(len(packages))))
        rows += [Row(f"{eco}: {name}", version) for name, version in shown]
        if len(shown) < len(packages):
            rows.append(Row(f"{eco}: …", f"{len(packages) - len(shown)} more (--all shows every package)"))
    return tuple(rows)


def _repo(c: Capsule) -> tuple[Row, ...]:
    r = c.repo
    if r is None:
        return ()
    diff = None
    if r.diff is not None:
        size = len(r.diff.encode("utf-8", "surrogatepass"))
        flags = (", truncated" if r.diff_truncated else "") + (", redacted" if r.diff_redacted else "")
        diff = f"{size} bytes{flags}" if size else "(clean)"
    untracked = ", ".join(r.untracked) if r.untracked else None
    return _rows((("remote", r.remote), ("commit", r.commit), ("branch", r.branch), ("dirty", r.dirty),
                  ("diff", diff if r.diff is not None else "(not recorded)"), ("untracked", untracked)))


def _env(c: Capsule) -> tuple[Row, ...]:
    return tuple(Row(n, env_shown(f), "host-specific" if f.host_specific else None) for n, f in c.env.items())


def _locale(c: Capsule) -> tuple[Row, ...]:
    loc = c.locale
    return _rows((("time zone", loc.time_zone), ("locale", loc.locale), ("LANG", loc.lang),
                  ("LC_ALL", loc.lc_all)))


def _redaction(c: Capsule) -> tuple[Row, ...]:
    r = c.redaction
    if r is None:
        return ()
    rows = _rows((("rules version", r.rules_version), ("hashed values", r.hashed_values),
                  ("values included", ", ".join(r.values_included) or None),
                  ("proof findings", r.proof_findings)))
    return rows + tuple(Row(f"scrubbed {rule}", str(n)) for rule, n in r.scrubbed.items())


def _http(c: Capsule) -> tuple[Row, ...]:
    return tuple(Row(f"#{call.seq}", http_line(call)) for call in c.http_calls)


def _values(c: Capsule) -> tuple[Row, ...]:
    return tuple(Row(f"#{v.seq} {v.kind}", v.value) for v in c.values)


def _artifact(a: Artifact) -> str:
    size = None if a.size_bytes is None else f"{a.size_bytes} B"
    bits = [f"sha256:{a.sha256}" if a.sha256 else None, size, a.media_type]
    return f"{a.logical_path} ← {a.path}" + "".join(f", {b}" for b in bits if b)


def _inputs(c: Capsule) -> tuple[Row, ...]:
    return tuple(Row("input", _artifact(a)) for a in c.inputs) + tuple(
        Row("expected output", _artifact(a)) for a in c.expected_outputs
    )


def _policy(c: Capsule) -> tuple[Row, ...]:
    p = c.policy
    rows = _rows((("wallclock at start", c.wallclock_at_start),))
    if p is None:
        return rows
    return rows + _rows((("egress", p.egress), ("allowed hosts", ", ".join(p.allowed_hosts) or None),
                         ("denied hosts", ", ".join(p.denied_hosts) or None), ("freeze clock", p.freeze_clock),
                         ("injected now", p.injected_now)))


def _provenance(c: Capsule) -> tuple[Row, ...]:
    p = c.provenance
    rows = _rows((("format", p.format.value), ("format version", p.format_version), ("path", p.path),
                  ("generator", p.generator), ("created at", p.created_at), ("id", p.capsule_id),
                  ("seal", "present" if p.seal_present else "none"), ("global run id", p.global_run_id)))
    for w in p.workers:
        desc = ", ".join(str(x) for x in (w.role, w.distribution_role, w.status) if x)
        rows += (Row(f"worker {w.run_id}", desc + (f", rank {w.rank}" if w.rank is not None else "")),)
    return rows


Builder = Callable[[Capsule], tuple[Row, ...]]


def sections(capsule: Capsule, *, full: bool = False, limit: int = DEFAULT_LIMIT) -> tuple[Section, ...]:
    """Every group in display order; an empty one says why it is empty."""
    plan: tuple[tuple[str, str | None, Builder], ...] = (
        ("Command", None, _command), ("Outcome", None, _outcome), ("Platform", "platform", _platform),
        ("Runtimes", "runtimes", _runtimes), ("Tools", "tools", _tools),
        ("Package managers", "package managers", _package_managers),
        ("Resolved packages", "resolved packages", lambda c: _resolved(c, full, limit)),
        ("Repository", "repo", _repo), ("Environment", "env", _env), ("Locale", "locale", _locale),
        ("Redaction", "redaction", _redaction), ("HTTP calls", "http", _http),
        ("Clock and random values", "values", _values), ("Inputs / expected outputs", "inputs", _inputs),
        ("Replay policy", "policy", _policy), ("Provenance", None, _provenance),
    )  # fmt: skip
    return tuple(_section(capsule, title, group, build) for title, group, build in plan)


def _section(c: Capsule, title: str, group: str | None, build: Builder) -> Section:
    rows = build(c)
    if rows:
        return Section(title, rows)
    recorded = group is None or records_group(c, group)
    return Section(title, (), NONE_RECORDED if recorded else NOT_RECORDED)
