"""Build the model from a NovaFabric capsule's parsed (and schema-checked) files.

Pure functions over already-validated data; only reading outputs/stdout.txt,
outputs/stderr.txt and the worker capsules a distributed run's parent holds touches the disk.
"""
from __future__ import annotations

import base64
import itertools
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import CapsuleError
from ..textsafe import shown
from . import jsonload
from .model import (
    HOST_SPECIFIC_ENV,
    Artifact,
    Body,
    Capsule,
    Command,
    EnvFact,
    Format,
    FrozenMap,
    Locale,
    Outcome,
    PackageManager,
    Platform,
    Provenance,
    PythonEnv,
    Redaction,
    Repo,
    ReplayPolicy,
    Resolved,
    Worker,
)
from .files import read_capped
from .yamlload import PathEscape, inside

# Values a replay maps to the container's own rather than copies.
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_WORKERS = 10_000
_PEP503 = re.compile(r"[-_.]+")


def run_capsule(
    root: Path,
    manifest: Mapping[str, Any],
    env: Mapping[str, Any],
    policy: Mapping[str, Any],
    proof: Mapping[str, Any] | None,
    distributed: Mapping[str, Any] | None,
) -> Capsule:
    python = env.get("python")
    wallclock = (env.get("runtime") or {}).get("wallclock_at_start")
    return Capsule(
        provenance=_provenance(root, manifest, distributed),
        command=_command(root, manifest),
        platform=_platform(manifest["host"]),
        runtimes=_runtimes(manifest["host"], python),
        package_managers=_package_managers(python),
        resolved=Resolved(python=_resolved(python)),
        repo=_repo(manifest.get("git")),
        env=_env(env.get("runtime_env") or {}),
        locale=_locale(env),
        redaction=Redaction(proof_findings=int(proof["findings_count"]["total"])) if proof else None,
        inputs=_artifacts(root, manifest["inputs"], "inputs"),
        expected_outputs=_artifacts(root, manifest["outputs"], "outputs"),
        policy=_policy(policy, wallclock or manifest.get("created_at")),
        python=_python(root, python),
        wallclock_at_start=wallclock,
        working_directory=manifest["working_directory"],
    )


def _provenance(root: Path, manifest: Mapping[str, Any], distributed: Mapping[str, Any] | None) -> Provenance:
    return Provenance(
        format=Format.NOVAFABRIC,
        format_version=manifest["schema_version"],
        path=str(root),
        generator=f"novafabric {manifest['novafabric_version']}",
        created_at=manifest["created_at"],
        capsule_id=manifest["run_id"],
        seal_present=(root / ".seal" / "manifest.dsse").exists(),
        global_run_id=distributed.get("global_run_id") if distributed else None,
        workers=workers(root, distributed) if distributed else (),
    )


def _command(root: Path, manifest: Mapping[str, Any]) -> Command:
    exit_code = manifest.get("exit_code")
    status = manifest["status"]
    passed = status == "success" and exit_code in (None, 0)
    error = manifest.get("error") or {}
    return Command(
        argv=tuple(manifest["command"]),
        cwd=manifest["working_directory"],
        cwd_is_host_path=True,  # recorded with the home directory as ~, not relative to a repo
        exit_code=exit_code,
        outcome="pass" if passed else "fail",
        status=status,
        duration_ms=manifest["duration_ms"],
        stdout=_stream(root, "outputs/stdout.txt"),
        stderr=_stream(root, "outputs/stderr.txt"),
        error_type=error.get("type"),
        error_message=error.get("message"),
    )


def _inside(root: Path, rel: Any, file: str, what: str) -> Path:
    """A path the replay will read from: one that leaves the capsule makes it unreadable."""
    try:
        return inside(root, rel)
    except PathEscape as e:
        raise CapsuleError(root / file, f"{what}: {e}") from None


def _stream(root: Path, rel: str) -> Body:
    """A recorded stream; capture writes the file only when the stream was not empty."""
    path = _inside(root, rel, rel, "recorded output")
    if not path.exists():
        return Body(text="")
    data = read_capped(path, MAX_OUTPUT_BYTES)
    try:
        return Body(text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return Body(base64=base64.b64encode(data).decode("ascii"))


def _platform(host: Mapping[str, Any]) -> Platform:
    # NovaFabric records no distro and no libc: they stay None, never guessed.
    return Platform(os=host["os"], arch=host["arch"], cpu_count=host["cpu_count"], memory_bytes=host["memory_bytes"])


def _runtimes(host: Mapping[str, Any], python: Mapping[str, Any] | None) -> FrozenMap[str, str]:
    version = (python or {}).get("version") or host.get("python")
    return FrozenMap({"python": version} if version else {})


def _python(root: Path, python: Mapping[str, Any] | None) -> PythonEnv | None:
    if not python:
        return None
    if python.get("lock_file_ref") is not None:
        _inside(root, python["lock_file_ref"], "env.lock", "python.lock_file_ref")
    return PythonEnv(
        interpreter=python.get("interpreter"),
        version=python.get("version"),
        package_manager=python.get("package_manager"),
        lock_file_kind=python.get("lock_file_kind"),
        lock_file_ref=python.get("lock_file_ref"),
        lock_file_sha256=_hex(python.get("lock_file_hash")),
    )


def _package_managers(python: Mapping[str, Any] | None) -> tuple[PackageManager, ...]:
    name = (python or {}).get("package_manager")
    if not name or name == "none":
        return ()
    assert python is not None
    return (
        PackageManager(
            name=name,
            ecosystem="python",
            lockfile=python.get("lock_file_ref"),
            lockfile_sha256=_hex(python.get("lock_file_hash")),
        ),
    )


def _resolved(python: Mapping[str, Any] | None) -> FrozenMap[str, str]:
    packages = (python or {}).get("installed_packages") or []
    pinned = {normalise(p["name"]): p["version"] for p in packages}
    return FrozenMap(sorted(pinned.items()))


def normalise(name: str) -> str:
    """PEP 503 name: capture records distribution names as installed (PyYAML, typing_extensions)."""
    return _PEP503.sub("-", name).lower()


def _repo(git: Mapping[str, Any] | None) -> Repo | None:
    if not git:
        return None
    # diff None: NovaFabric records that the tree was dirty, never the diff itself.
    return Repo(
        remote=git.get("remote_url"), commit=git["commit_sha"], branch=git["branch"], dirty=git["dirty"], diff=None
    )


def _env(runtime_env: Mapping[str, Any]) -> FrozenMap[str, EnvFact]:
    recorded = runtime_env.get("recorded") or {}
    return FrozenMap(
        (name, EnvFact(name, "set" if value else "empty", value=value, host_specific=name in HOST_SPECIFIC_ENV))
        for name, value in sorted(recorded.items())
    )


def _locale(env: Mapping[str, Any]) -> Locale:
    locale = env.get("locale") or {}
    zone = (env.get("runtime") or {}).get("timezone") or locale.get("tz")
    return Locale(time_zone=zone, lang=locale.get("lang"), lc_all=locale.get("lc_all"))


def _policy(doc: Mapping[str, Any], wallclock: str | None) -> ReplayPolicy:
    network = doc.get("network") or {}
    time = doc.get("time") or {}
    freeze = time.get("freeze_clock")
    injected = time.get("injected_now")
    if freeze and injected is None:
        injected = wallclock  # the policy says: null injected_now means the captured start time
    return ReplayPolicy(
        egress=network.get("egress"),
        allowed_hosts=tuple(network.get("allowed_hosts") or ()),
        denied_hosts=tuple(network.get("denied_hosts") or ()),
        freeze_clock=freeze,
        injected_now=injected,
    )


def file_artifacts(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Inputs and outputs stored as files in the capsule (not inline, not external)."""
    # verify() lists every problem, so it gets here with members of any type: only lists hold artifacts.
    items = [item for key in ("inputs", "outputs") if isinstance(manifest.get(key), list) for item in manifest[key]]
    return [i for i in items if isinstance(i, dict) and not i.get("inline") and not i.get("external")]


def _artifacts(root: Path, items: list[Mapping[str, Any]], member: str) -> tuple[Artifact, ...]:
    artifacts = []
    for i, item in enumerate(items):
        if item.get("inline") or item.get("external"):
            continue  # not a file in the capsule: nothing to place
        path = item["path"]
        full = _inside(root, path, "capsule.yaml", f"{member}[{i}].path")
        if member == "inputs":
            _regular_file(root, full, f"{member}[{i}].path")
        artifacts.append(
            Artifact(
                name=item["name"],
                path=path,
                logical_path=path.removeprefix(member + "/"),
                sha256=_hex(item["content_hash"]),
                size_bytes=item.get("size_bytes"),
                media_type=item.get("media_type"),
            )
        )
    return tuple(artifacts)


def _regular_file(root: Path, path: Path, what: str) -> None:
    """An input the build context will copy: a FIFO would block the copy, a device or a missing file break it."""
    try:
        st = path.lstat()
    except OSError as e:
        raise CapsuleError(root / "capsule.yaml", f"{what}: {shown(path.relative_to(root).as_posix(), 80)} "
                                                  f"{'is missing' if isinstance(e, FileNotFoundError) else 'cannot be read'}") from None
    if not stat.S_ISREG(st.st_mode):
        raise CapsuleError(root / "capsule.yaml", f"{what}: {shown(path.relative_to(root).as_posix(), 80)} is not a regular file")


def _hex(digest: str | None) -> str | None:
    return digest.removeprefix("sha256:") if digest else None


# --- distributed runs ---------------------------------------------------------------


def distributed_capsule(root: Path, doc: Mapping[str, Any]) -> Capsule:
    """A parent (or child) of a distributed run: no command of its own, only its members."""
    status = doc["status"]
    outcomes: dict[str, Outcome] = {"COMPLETE": "pass", "FAILED": "fail", "PARTIALLY_COMPLETE": "fail"}
    outcome = outcomes.get(status)  # RUNNING: no outcome yet
    provenance = Provenance(
        format=Format.NOVAFABRIC,
        format_version=doc["schema_version"],
        path=str(root),
        created_at=doc["created_at"],
        capsule_id=doc["run_id"],
        global_run_id=doc["global_run_id"],
        workers=workers(root, doc),
    )
    return Capsule(provenance=provenance, command=Command(argv=(), cwd=None, status=status, outcome=outcome))


def workers(root: Path, doc: Mapping[str, Any]) -> tuple[Worker, ...]:
    """The worker capsules of the same global run, naming this one as their parent, that the
    capsule holds: its subdirectories' capsule.json (a run shipped as one directory).

    NovaFabric's writer puts every capsule of a run side by side in one spool directory
    (<spool>/<run_id>/capsule.json); those siblings are never read: replay reads nothing
    outside the capsule it was given (each worker is a capsule of its own to inspect).
    """
    found = []
    for child_dir in _held(root):
        try:
            path = inside(root, f"{child_dir.name}/capsule.json")  # no symlink, nothing outside
            child = jsonload.load(path)
        except (CapsuleError, PathEscape):
            continue  # another capsule's problem, not this one's
        if _is_child_of(child, doc):
            found.append(_worker(child))
    return tuple(sorted(found, key=lambda w: (w.rank if w.rank is not None else -1, w.run_id)))


def _held(root: Path) -> list[Path]:
    held = []
    try:
        entries = sorted(itertools.islice(root.iterdir(), MAX_WORKERS))
    except OSError:
        return []
    for entry in entries:
        if not entry.is_symlink() and entry.is_dir() and (entry / "capsule.json").is_file():
            held.append(entry)
    return held


def _is_child_of(child: Any, doc: Mapping[str, Any]) -> bool:
    return (
        isinstance(child, dict)
        and isinstance(child.get("run_id"), str)
        and child.get("parent_run_id") == doc.get("run_id")
        and child.get("global_run_id") == doc.get("global_run_id")
    )


def _worker(child: Mapping[str, Any]) -> Worker:
    rank = child.get("rank")
    return Worker(
        run_id=child["run_id"],
        role=_str(child.get("capsule_role")),
        distribution_role=_str(child.get("distribution_role")),
        rank=int(rank) if isinstance(rank, int) and not isinstance(rank, bool) else None,
        status=_str(child.get("status")),
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
