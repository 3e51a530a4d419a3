"""From a capsule to a replay plan: what to install, restore, set and run.

Every recorded fact ends up in the plan or in the fidelity table (exact,
approximated with the reason, or not applied with the reason); nothing is
dropped silently.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import posixpath
from collections.abc import Iterable
from typing import Literal
from pathlib import Path, PurePosixPath

from .sources.baseimage import choose_base
from ..capsules.model import HOST_SPECIFIC_ENV, Capsule, FrozenMap
from .clock import clock_start, parse_rfc3339
from ..config import Settings
from ..errors import CapsuleError, NeedsInput, UsageError
from .sources.content import ContentStore, content_store
from .plan import BaseImage, EnvSetting, Fidelity, InputFile, Lock, Plan, PlanOptions, Runtime, Source
from .sources.providers import BUNDLED_TOOLS, COMMAND_RUNTIME, ECOSYSTEM_RUNTIME, resolve_runtime
from .sources.providers import node as node_provider
from .sources.providers.versions import is_line
from . import pins
from .seeding import seeded
from .httprules import http_ignore, http_rows
from .gowarm import go_warm, warm_rows
from .toolplan import bundled_tool_rows, locks, node_tools, python_tools
from .validate import Kind, check, is_valid, relative_path, run_path, validate_plan

NOT_LOCALES = {"C", "POSIX", "C.UTF-8", "C.utf8"}
DEFAULT_NODE = "22"  # major used when a command needs node and the capsule records none
# What a runtime the command needs but the capsule does not record defaults to (nearest release).
DEFAULT_VERSIONS = {"node": DEFAULT_NODE, "go": "1.24", "bun": "1", "deno": "2", "java": "17", "ruby": "3",
                    "rustc": "1"}


def make_plan(capsule: Capsule, settings: Settings, opts: PlanOptions = PlanOptions()) -> Plan:
    if not capsule.command.argv:
        raise CapsuleError(capsule.provenance.path, "the capsule records no command to replay (empty argv)")
    rows: list[Fidelity] = []
    notes: list[str] = []
    store = content_store(settings.cache_dir)
    py_recorded = capsule.runtimes.get("python") or (capsule.python.version if capsule.python else None)
    needed = _needed_runtimes(capsule)
    base, base_rows = choose_base(capsule.platform, py_recorded, needed)
    rows += base_rows
    runtimes = _runtimes(capsule, needed, base, settings, opts, rows)
    lock, python_lock = locks(capsule, rows, store)
    tools = node_tools(capsule, runtimes, settings, rows) + python_tools(capsule, runtimes, python_lock, settings, rows)
    rows += bundled_tool_rows(capsule, runtimes)
    if capsule.command.cached_by:  # replay runs it for real: the recorded outcome was a cache's
        rows.append(Fidelity(f"{capsule.command.cached_by} result", "cached", "run", "approximated",
                             "the recorded outcome came from the tool's result cache, not a run"))
    env, locales = _env(capsule, opts, rows, notes)
    valid = functools.partial(_valid, capsule)
    node_pins = pins.node_pins(capsule, runtimes, lock, tools, opts.pin, valid, rows)
    python_pins = pins.python_pins(capsule, runtimes, python_lock, opts.pin, valid, rows)
    source, workdir = _source(capsule, opts, rows, notes, store)
    calls = (opts.http or capsule).http_calls
    values = (opts.http or capsule).values
    network, allowed, denied = _network(capsule, bool(calls), rows, notes)
    rows += http_rows(calls, denied)
    clock = _clock_start(capsule, opts)
    warm = go_warm(capsule.command.argv, env) if any(r.name == "go" for r in runtimes) else None
    rows += warm_rows(warm, capsule.command.argv, env)
    plan = Plan(
        title=_title(capsule), capsule_id=_capsule_id(capsule), base=base, argv=capsule.command.argv,
        workdir_rel=workdir, runtimes=runtimes, tools=tools, lock=lock, python_lock=python_lock,
        installer_node=_installer_node(runtimes, lock, settings),
        node_pins=node_pins, python_pins=python_pins, pin_node=opts.pin, source=source,
        inputs=_inputs(capsule, store), locales=locales, env=env,
        network=network, allowed_hosts=allowed, denied_hosts=denied, http_calls=calls,
        http_ignore=http_ignore(opts.http_ignore) if calls else (), values=values,
        clock_start=clock, faketime=clock is not None, fidelity=tuple(rows), notes=tuple(notes),
        alternatives=pins.alternatives(capsule, node_pins), go_warm=warm,
    )
    return validate_plan(seeded(capsule, plan, opts.seeds, opts.pin_settings), capsule.provenance.path)


def _valid(c: Capsule, kind: Kind, value: str, what: str) -> str:
    return check(kind, value, what, c.provenance.path)


def _title(c: Capsule) -> str:
    return f"{c.provenance.format.value} {' '.join(c.command.argv)[:80]}"


def _capsule_id(c: Capsule) -> str:
    if c.provenance.capsule_id:
        return c.provenance.capsule_id.replace("sha256:", "")[:26]
    text = repr(c.command)
    if c.command.cached_by is None:  # as before the field existed: a capsule keeps its id (the farm's history key)
        text = text.removesuffix(", cached_by=None)") + ")"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _inputs(c: Capsule, store: ContentStore) -> tuple[InputFile, ...]:
    """The capsule's input files, into the content store: the plan names them by digest."""
    root = Path(c.provenance.path)
    return tuple(InputFile(relative_path(a.logical_path, "input", c.provenance.path),
                           store.put_file(root / a.path, c.provenance.path, "input"))
                 for a in c.inputs)


def _needed_runtimes(c: Capsule) -> set[str]:
    needed: set[str] = set()
    if c.command.argv:
        prog = PurePosixPath(c.command.argv[0]).name
        prog = prog.rstrip("0123456789.") if prog.startswith("python") else prog
        if prog in COMMAND_RUNTIME:
            needed.add(COMMAND_RUNTIME[prog])
    for pm in c.package_managers:
        if pm.ecosystem in ECOSYSTEM_RUNTIME:
            needed.add(ECOSYSTEM_RUNTIME[pm.ecosystem])
        if pm.name in BUNDLED_TOOLS:
            needed.add(BUNDLED_TOOLS[pm.name])
    if c.resolved.node:
        needed.add("node")
    if c.resolved.python or c.python:
        needed.add("python")
    return needed


def _runtimes(c: Capsule, needed: set[str], base: BaseImage, settings: Settings, opts: PlanOptions,
              rows: list[Fidelity]) -> tuple[Runtime, ...]:
    out: list[Runtime] = []
    recorded = dict(c.runtimes)
    if c.python and c.python.version and "python" not in recorded:
        recorded["python"] = c.python.version
    for pm in c.package_managers:  # go, cargo and bun report their runtime's version
        if pm.name in BUNDLED_TOOLS and pm.version:
            recorded.setdefault(BUNDLED_TOOLS[pm.name], pm.version)
    for name in sorted(set(recorded) | needed):
        version = recorded.get(name)
        if name not in needed and not opts.all_runtimes:
            rows.append(Fidelity(f"runtime {name}", version or "-", "-", "recorded, not installed",
                                 "the command does not need it (--all-runtimes installs it)"))
            continue
        defaulted = version is None
        version = version or (base.python if name == "python" else DEFAULT_VERSIONS.get(name, "0"))
        runtime, row = resolve_runtime(name, _valid(c, "version", version, f"runtime {name}"), base, settings)
        if defaulted and runtime is not None:
            why = (f"the capsule records no version; the default line {version}: its newest release"
                   if is_line(version) else f"the capsule records no version; the default ({runtime.source} "
                   f"{runtime.version}) is used")
            runtime = Runtime(name, None, runtime.version, runtime.source, False, why)
            row = Fidelity(f"runtime {name}", "not recorded", runtime.version, "approximated", why)
        rows.append(row)
        if runtime is not None:
            out.append(runtime)
    return tuple(out)


def _installer_node(runtimes: tuple[Runtime, ...], lock: Lock | None, settings: Settings) -> Runtime | None:
    """For an npm lockfile: the node that may install it (installer.py decides at build time)."""
    node = next((r for r in runtimes if r.name == "node"), None)
    if node is None or lock is None or lock.manager != "npm":
        return None
    return node_provider.installer(node, settings)


def _env(c: Capsule, opts: PlanOptions, rows: list[Fidelity], notes: list[str]) -> tuple[FrozenMap[str, EnvSetting], tuple[str, ...]]:
    env: dict[str, EnvSetting] = {}
    for name, fact in c.env.items():
        if fact.host_specific or name in HOST_SPECIFIC_ENV:
            rows.append(Fidelity(f"env {name}", "host value" if fact.value else fact.state, "container's own",
                                 "not applied", "host-specific: mapped to the container's, not copied"))
        elif fact.state == "set" and fact.value is None:
            rows.append(Fidelity(f"env {name}", "set (value not recorded)", "unset", "not applied",
                                 "value not recorded; supply it with --env NAME=VALUE"))
        else:
            env[name] = EnvSetting(fact.state, fact.value or "")
            shown = fact.value if fact.state == "set" else fact.state
            rows.append(Fidelity(f"env {name}", shown or "", shown or "", "exact"))
    tz_recorded = c.env.get("TZ")
    # twin: the resolved zone applies when the capsule has no explicit TZ (TZ= empty is explicit: UTC)
    if (tz_recorded is None or tz_recorded.state != "empty" and tz_recorded.value is None) and c.locale.time_zone:
        env["TZ"] = EnvSetting("set", c.locale.time_zone)
        rows.append(Fidelity("env TZ", f"time zone {c.locale.time_zone}", c.locale.time_zone, "exact",
                             "TZ set from the recorded time zone"))
    if c.locale.lang and "LANG" not in env:
        env["LANG"] = EnvSetting("set", c.locale.lang)
    if c.locale.lc_all and "LC_ALL" not in env:
        env["LC_ALL"] = EnvSetting("set", c.locale.lc_all)
    for name, value in opts.env_overrides:
        if not supplied_here(c, name, opts.fill_only):
            env[name] = EnvSetting("withheld")
            rows[:] = [r for r in rows if r.fact != f"env {name}"]
            rows.append(Fidelity(f"env {name}", _describe(c, name), "unset", "exact",
                                 "--env fills in a variable recorded by name only where it was set; "
                                 "this capsule recorded it unset, so it stays unset"))
            continue
        _check_hash(c, name, value, opts.salt, notes)
        # the value is given to the run only (ReplayOptions.secret_env), never kept in the plan
        env[name] = EnvSetting("supplied" if value else "empty")
        rows[:] = [r for r in rows if r.fact != f"env {name}"]
        # the value may be a secret the user supplies: reports never show it
        rows.append(Fidelity(f"env {name}", _describe(c, name), "(supplied)" if value else "(empty)",
                             "not applied" if name in c.env else "exact", "overridden with --env"))
    supplied = {name: value for name, value in opts.env_overrides}
    locales = sorted({supplied.get(k, s.value) for k, s in env.items() if k in ("LANG", "LC_ALL") or k.startswith("LC_")
                      if s.state in ("set", "supplied") and supplied.get(k, s.value) not in NOT_LOCALES | {""}})
    overridden = set(supplied.values())
    usable = []
    for loc in locales:
        if loc in overridden and not is_valid("locale", loc):
            raise UsageError(f"--env: {loc!r} is not a valid locale")
        if not is_valid("locale", loc):  # set as recorded, but nothing to generate it from
            rows.append(Fidelity("locale", loc, "-", "not applied", "not a locale name localedef understands"))
            continue
        usable.append(loc)
        rows.append(Fidelity("locale", loc, loc, "exact", "generated in the image with localedef"))
    return FrozenMap(sorted(env.items())), tuple(usable)


def fill_only(capsules: Iterable[Capsule], overrides: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The supplied names (--env NAME=VALUE) that a capsule of this session records by name only
    (set, its value not recorded). Such a value fills the variable in where it was set; a capsule
    that recorded it unset, or not at all, keeps it unset (so bisect can find it). Any other
    supplied name overrides the recorded value everywhere."""
    found = list(capsules)
    return frozenset(name for name, _ in overrides
                     if any((f := c.env.get(name)) is not None and f.state == "set" and f.value is None for c in found))


def supplied_here(c: Capsule, name: str, fill: frozenset[str]) -> bool:
    """The one rule: does a value supplied for `name` reach this capsule's run?"""
    if name not in fill:
        return True  # --env overrides, as its help says
    fact = c.env.get(name)
    return fact is not None and fact.state in ("set", "empty")


def _describe(c: Capsule, name: str) -> str:
    fact = c.env.get(name)
    if fact is None:
        return "not recorded"
    return fact.value if fact.value is not None else fact.state


def _check_hash(c: Capsule, name: str, value: str, salt: str | None, notes: list[str]) -> None:
    fact = c.env.get(name)
    if fact is None or fact.hash is None:
        return
    if salt is None:
        notes.append(f"env {name}: the capsule holds a salted hash; pass --salt to check the supplied value")
        return
    digest = hmac.new(salt.encode(), value.encode(), hashlib.sha256).hexdigest()[:32]
    if digest != fact.hash:
        raise UsageError(f"--env {name}: the supplied value does not match the capsule's salted hash")
    notes.append(f"env {name}: the supplied value matches the capsule's salted hash")


def _source(c: Capsule, opts: PlanOptions, rows: list[Fidelity], notes: list[str],
            store: ContentStore) -> tuple[Source | None, str]:
    workdir = _workdir(c)
    if opts.source_dir:
        return Source(remote=None, commit=None, patch=opts.patch, local_tree=store.put_tree(Path(opts.source_dir))), workdir
    repo = c.repo
    if repo is None or repo.commit is None:
        if opts.repo or opts.ref:
            raise NeedsInput(f"{c.provenance.path}: the capsule records no commit; --repo/--ref need one (use --source DIR)")
        if c.inputs or c.provenance.format.value in ("codeinstances", "twin"):  # twin: run outside a git tree
            notes.append("no source recorded: the working directory holds only the capsule's inputs")
            return None, workdir
        raise NeedsInput(f"{c.provenance.path}: the capsule records no source (no git commit); pass --source DIR")
    commit = opts.ref or repo.commit
    diff = "" if opts.ref else (repo.diff or "")
    if opts.ref:
        rows.append(Fidelity("repo commit", repo.commit, opts.ref, "not applied", "--ref: another commit, without the diff"))
    else:
        rows.append(Fidelity("repo commit", repo.commit, repo.commit, "exact"))
    if repo.diff is None and repo.dirty:
        rows.append(Fidelity("repo diff", "dirty, not recorded", "-", "not applied", "the format does not record the diff"))
    for name in repo.untracked:
        rows.append(Fidelity("untracked file", name, "-", "not applied", "names only are recorded; not restorable"))
    return Source(remote=opts.repo or repo.remote, remote_from_user=bool(opts.repo), commit=commit, diff=diff, diff_truncated=repo.diff_truncated,
                  diff_redacted=repo.diff_redacted, untracked=repo.untracked, patch=opts.patch), workdir


def _workdir(c: Capsule) -> str:
    cwd = c.command.cwd
    if not cwd or c.command.cwd_is_host_path:
        return "."
    return run_path(posixpath.normpath(cwd), "command.cwd", c.provenance.path)


def _network(c: Capsule, has_calls: bool, rows: list[Fidelity],
             notes: list[str]) -> tuple[Literal["none", "replay", "allow"], tuple[str, ...], tuple[str, ...]]:
    policy = c.policy
    allowed = policy.allowed_hosts if policy else ()
    denied = policy.denied_hosts if policy else ()
    if has_calls:
        rows.append(Fidelity("network", "recorded HTTP calls", "replay server", "exact",
                             "hosts resolve to the replay server; nothing leaves"))
        return "replay", allowed, denied
    if policy and policy.egress == "allow":
        rows.append(Fidelity("network", "egress allow", "bridge network", "exact", "the capsule's policy allows egress"))
        notes.append("network allowed by the capsule's replay policy: this replay is not hermetic")
        return "allow", allowed, denied
    if policy and policy.egress == "policy":
        rows.append(Fidelity("network", "egress policy", "none", "approximated",
                             "host allow-lists need recorded traffic (--http); replayed without network"))
    return "none", allowed, denied


def _clock_start(c: Capsule, opts: PlanOptions) -> str | None:
    """The first recorded clock value (by seq), else a NovaFabric policy's time; always a valid RFC 3339."""
    src = opts.http or c
    start = clock_start(src.values, None)
    if start is None and c.policy and (c.policy.freeze_clock or c.policy.injected_now):
        for candidate in (c.policy.injected_now, c.wallclock_at_start, c.provenance.created_at):
            if candidate and parse_rfc3339(candidate):
                return candidate
        raise CapsuleError(c.provenance.path, "replay.yaml asks for a recorded clock but no valid time is recorded")
    return start
