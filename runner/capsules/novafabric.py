"""NovaFabric Run Capsule: a directory holding capsule.yaml (maybe sealed with DSSE).

Also recognised: a distributed run's capsule.json (parent/child schema), whose
workers are the capsules it holds (subdirectories) naming it as their parent; its
siblings are never read. The formats README
("NovaFabric Run Capsule") pins down what the seed leaves open.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CapsuleError, UnsupportedVersion
from . import jsonload
from . import novafabric_model as build
from . import novafabric_seal as seal
from . import novafabric_verify as checks_of
from .model import Capsule, Format
from .scope import Scope, pm_keys
from .verification import Problem, Signer, VerifyResult
from .yamlload import PathEscape, inside, load_yaml_mapping

FORMAT = Format.NOVAFABRIC
SCOPE = Scope(
    frozenset({"platform", "runtimes", "package managers", "resolved packages", "repo", "env", "locale",
               "redaction", "inputs", "policy"}),
    ("command:argv", "command:host_cwd", "platform:os", "platform:arch", "platform:cpu_count",
     "platform:memory_bytes", "runtime:python", "python:interpreter", "locale:timeZone", "locale:lang",
     "locale:lc_all", "input:*", *pm_keys("uv", "poetry", "pdm", "pip")),
)  # fmt: skip
MANIFEST = "capsule.yaml"
DISTRIBUTED = "capsule.json"
UNDERSTOOD = "0.x and 1.x"
ROLES = ("PARENT", "CHILD", "STANDALONE")
_VERSION = re.compile(r"^(\d+)\.\d+")


@dataclass(frozen=True)
class Parsed:
    """What detect() found: a run manifest, a distributed capsule.json, or both."""

    root: Path
    manifest: Mapping[str, Any] | None
    distributed: Mapping[str, Any] | None


def detect(path: Path) -> Parsed | None:
    """The parsed capsule when ``path`` is a NovaFabric capsule (or its capsule.yaml)."""
    if path.is_file():
        if path.name == MANIFEST:
            return _parsed(path.parent)
        if path.name == DISTRIBUTED and _distributed(path.parent) is not None:
            return _parsed(path.parent)
        return None
    if not path.is_dir():
        return None
    if (path / MANIFEST).exists() or (path / MANIFEST).is_symlink():
        return _parsed(path)
    if (path / DISTRIBUTED).is_file() and _distributed(path) is not None:
        return _parsed(path)
    # NovaFabric is tried last, so a directory nothing else claimed gets this clearer line.
    raise CapsuleError(path, f"directory has no {MANIFEST} (not a NovaFabric Run Capsule)")


def _parsed(root: Path) -> Parsed:
    manifest = None
    if (root / MANIFEST).exists() or (root / MANIFEST).is_symlink():
        manifest = _manifest(root)
    distributed = _distributed(root, tolerant=manifest is not None)
    if distributed is not None:
        _check_version(root / DISTRIBUTED, distributed)
    return Parsed(root, manifest, distributed)


def _manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    try:
        inside(root, MANIFEST)
    except PathEscape as e:
        raise CapsuleError(path, str(e)) from None
    manifest = load_yaml_mapping(path)
    if "schema_version" not in manifest or "run_id" not in manifest:
        raise CapsuleError(path, "not a NovaFabric manifest (no schema_version or run_id)")
    _check_version(path, manifest)
    return manifest


def _check_version(path: Path, doc: Mapping[str, Any]) -> None:
    version = doc.get("schema_version")
    match = _VERSION.match(version) if isinstance(version, str) else None
    if not isinstance(version, str) or match is None:
        raise CapsuleError(path, f"schema_version {version!r} is not a version number")
    if int(match.group(1)) > 1:
        raise UnsupportedVersion(path, version, UNDERSTOOD, "NovaFabric Run Capsule")


def _distributed(root: Path, tolerant: bool = False) -> dict[str, Any] | None:
    """capsule.json when it is a distributed (parent/child) capsule, else None.

    ``tolerant``: beside a capsule.yaml, a bad capsule.json only means "not distributed".
    """
    path = root / DISTRIBUTED
    if not path.is_file():
        return None
    try:
        inside(root, DISTRIBUTED)
        doc = jsonload.load(path)
    except PathEscape as e:
        if tolerant:
            return None
        raise CapsuleError(path, str(e)) from None
    except CapsuleError:
        if tolerant:
            return None
        raise
    if isinstance(doc, dict) and doc.get("capsule_role") in ROLES and "global_run_id" in doc:
        return doc
    return None


# --- read ---------------------------------------------------------------------------


def read(path: Path, parsed: Parsed) -> Capsule:
    """The capsule in the model; CapsuleError when a file it needs is bad or escapes."""
    root = parsed.root
    if parsed.manifest is None:
        assert parsed.distributed is not None  # detect() found one or the other
        checks_of.require_valid(root / DISTRIBUTED, parsed.distributed, "parent_child_capsule_v1")
        return build.distributed_capsule(root, parsed.distributed)
    manifest = parsed.manifest
    checks_of.require_valid(root / MANIFEST, checks_of.schema_part(manifest)[0], "run-capsule")
    env_path = _ref(root, manifest, "environment_ref")
    env = load_yaml_mapping(env_path)
    checks_of.require_valid(env_path, env, "environment")
    policy_path = _ref(root, manifest, "replay_policy_ref")
    policy = _optional_yaml(policy_path)
    checks_of.require_valid(policy_path, policy, "replay-policy")
    proof_path = _ref(root, manifest, "redaction_proof_ref")
    proof = jsonload.load(proof_path) if proof_path.exists() else None
    if proof is not None:
        checks_of.require_valid(proof_path, proof, "secret-redaction")
    return build.run_capsule(root, manifest, env, policy, proof, parsed.distributed)


def _ref(root: Path, manifest: Mapping[str, Any], key: str) -> Path:
    try:
        return inside(root, manifest.get(key))
    except PathEscape as e:
        raise CapsuleError(root / MANIFEST, f"{key}: {e}") from None


def _optional_yaml(path: Path) -> dict[str, Any]:
    # A missing replay.yaml means the minimal policy capture writes.
    return load_yaml_mapping(path) if path.exists() else {"schema_version": "0.1.0"}


# --- verify -------------------------------------------------------------------------


def verify(path: Path, trust_keys: Sequence[Path], parsed: Parsed | None = None) -> VerifyResult:
    """Every problem of the capsule, its seal and its evidence, in one result."""
    parsed = parsed or detect(Path(path))
    if parsed is None:
        raise CapsuleError(path, "not a NovaFabric Run Capsule")
    trusted = seal.load_trust_keys(trust_keys) if trust_keys else None
    problems: list[Problem] = []
    checks: list[str] = []
    signers: tuple[Signer, ...] = ()
    unbound: tuple[str, ...] = ()
    if parsed.distributed is not None:
        problems += _distributed_problems(parsed.root, parsed.distributed)
        checks.append(f"schema: {DISTRIBUTED}")
    if parsed.manifest is not None:
        report = checks_of.check_run(parsed.root, parsed.manifest, trusted)
        problems += report.problems
        signers, unbound = report.signers, report.unbound
        checks += report.checks
    sealed = parsed.manifest is not None and (parsed.root / seal.ENVELOPE).is_file()
    return VerifyResult(FORMAT.value, str(parsed.root), tuple(problems), signers, sealed, tuple(checks), unbound)


def _distributed_problems(root: Path, doc: Mapping[str, Any]) -> list[Problem]:
    problems = checks_of.schema_problems(doc, "parent_child_capsule_v1", DISTRIBUTED)
    if doc.get("capsule_role") != "PARENT":
        return problems
    found = len(build.workers(root, doc))
    arrived = doc.get("children_arrived")
    if found == 0:
        problems.append(Problem("info", "no worker capsules inside the parent (those beside it are capsules of "
                                        "their own: replay reads nothing outside the capsule)", DISTRIBUTED))
        return problems
    problems.append(Problem("info", f"{found} worker capsules found inside the parent", DISTRIBUTED))
    if isinstance(arrived, int) and arrived != found:
        problems.append(Problem("warning", f"children_arrived is {arrived}, {found} found", DISTRIBUTED))
    return problems
