"""Checks of a NovaFabric Run Capsule: schemas, paths, hashes, evidence and seal.

Every check returns Problems instead of raising, so that ``replay verify`` lists
every problem at once. As NovaFabric itself does, a missing or changed file fails;
unlike NovaFabric, files added after sealing and size mismatches are warnings.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from ..errors import CapsuleError
from . import jsonload
from . import novafabric_model as build
from . import novafabric_seal as seal
from .verification import Problem, Signer
from .yamlload import PathEscape, inside, load_yaml_mapping

MANIFEST = "capsule.yaml"
# Members capture writes although run-capsule.schema.json (additionalProperties: false)
# does not list them; their shapes are checked here instead.
CAPTURE_EXTRAS: Mapping[str, Any] = {
    "evidence_digests": {
        "type": "object",
        "additionalProperties": {
            "type": "object",
            "required": ["sha256", "size_bytes"],
            "properties": {
                "sha256": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                "size_bytes": {"type": "integer", "minimum": 0},
            },
        },
    },
    "network_events_ref": {"type": "string"},
    "file_events_ref": {"type": "string"},
    "human_approvals_ref": {"type": "string"},
}
MAX_SCHEMA_PROBLEMS = 50
MAX_FILES = 100_000
NEVER_LISTED = "capsule.yaml"  # with .seal/: what evidence_digests leaves out by design


@dataclass(frozen=True)
class Report:
    problems: tuple[Problem, ...]
    signers: tuple[Signer, ...]
    checks: tuple[str, ...]
    unbound: tuple[str, ...] = ()  # files replay reads that the seal does not cover


# --- schemas ------------------------------------------------------------------------


@cache
def _validator(schema: str) -> Draft202012Validator:
    text = resources.files(__package__).joinpath("schemas", f"{schema}.schema.json").read_text("utf-8")
    return Draft202012Validator(json.loads(text))


def schema_problems(data: Any, schema: str | Mapping[str, Any], where: str) -> list[Problem]:
    """Schema violations of ``data`` (a schema file's name, or an inline schema)."""
    validator = _validator(schema) if isinstance(schema, str) else Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        at = ".".join(map(str, error.absolute_path)) or "top level"
        problems.append(Problem("error", f"{at}: {error.message[:200]}", where))
        if len(problems) >= MAX_SCHEMA_PROBLEMS:
            break
    return problems


def require_valid(path: Path, data: Any, schema: str) -> None:
    """CapsuleError naming the first violation (for read(), which needs sound types)."""
    problems = schema_problems(data, schema, path.name)
    if problems:
        raise CapsuleError(path, f"does not match {schema}.schema.json: {problems[0].message}")


def schema_part(manifest: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The members the schema knows, and the unknown ones (ignored, as a reader should)."""
    schema: Any = _validator("run-capsule").schema
    known = schema["properties"]
    kept = {k: v for k, v in manifest.items() if k in known}
    unknown = tuple(k for k in manifest if k not in known and k not in CAPTURE_EXTRAS)
    return kept, unknown


# --- the run capsule ----------------------------------------------------------------


def check_run(root: Path, manifest: Mapping[str, Any], trusted: tuple[bytes, ...] | None) -> Report:
    problems = _manifest_problems(manifest) + _ref_problems(root, manifest)
    problems += _file_problems(root, manifest) + _artifact_problems(root, manifest)
    checks = ["schemas", "paths stay inside the capsule", "redaction chain_hash", "artifact content hashes"]
    present, walk_problems = walk(root)
    problems += walk_problems
    digests = manifest.get("evidence_digests")
    if digests is None:
        problems.append(Problem("info", "no evidence_digests: file contents are not bound to the manifest", MANIFEST))
    elif not schema_problems(digests, CAPTURE_EXTRAS["evidence_digests"], MANIFEST):
        problems += check_evidence(root, digests, present)
        checks.append(f"evidence_digests ({len(digests)} files)")
    signers: tuple[Signer, ...] = ()
    unbound: tuple[str, ...] = ()
    envelope = root / seal.ENVELOPE
    if envelope.exists() or envelope.is_symlink():
        sealed = seal.check_seal(root, manifest, trusted)
        problems += sealed.problems
        signers, checks = sealed.signers, checks + list(sealed.checks)
        unbound = unbound_files(root, manifest, present)
        problems += [Problem("error", f"{rel} is not bound by the seal ({_why_unbound(digests)}), and replay would "
                                      "read it", rel) for rel in unbound]
        checks.append("every file replay reads is bound by the seal")
    elif (root / ".seal").exists():
        problems.append(Problem("error", f".seal/ holds no {envelope.name}", ".seal"))
    else:
        problems.append(Problem("info", "not sealed", None))
    return Report(tuple(problems), signers, tuple(checks), unbound)


def _manifest_problems(manifest: Mapping[str, Any]) -> list[Problem]:
    kept, unknown = schema_part(manifest)
    problems = schema_problems(kept, "run-capsule", MANIFEST)
    problems += [Problem("warning", f"{k}: not in run-capsule.schema.json; ignored", MANIFEST) for k in unknown]
    for key, schema in CAPTURE_EXTRAS.items():
        if key in manifest:
            problems += schema_problems({key: manifest[key]}, {"properties": {key: schema}}, MANIFEST)
    return problems


def _ref_problems(root: Path, manifest: Mapping[str, Any]) -> list[Problem]:
    refs = {k: v for k, v in manifest.items() if k.endswith("_ref")}
    error = manifest.get("error")
    if isinstance(error, dict) and error.get("traceback_ref") is not None:
        refs["error.traceback_ref"] = error["traceback_ref"]
    problems = []
    for key, rel in refs.items():
        try:
            path = inside(root, rel)
        except PathEscape as e:
            problems.append(Problem("error", f"{key}: {e}", MANIFEST))
            continue
        if not path.exists() and key != "replay_policy_ref":  # a missing replay.yaml is the minimal policy
            problems.append(Problem("error", f"{key}: {rel} is missing", MANIFEST))
    return problems


def _file_problems(root: Path, manifest: Mapping[str, Any]) -> list[Problem]:
    """Schema problems of env.lock, replay.yaml and redaction-proof.json, and their own checks."""
    problems: list[Problem] = []
    for key, schema, loader in (
        ("environment_ref", "environment", load_yaml_mapping),
        ("replay_policy_ref", "replay-policy", load_yaml_mapping),
        ("redaction_proof_ref", "secret-redaction", jsonload.load),
    ):
        try:
            path = inside(root, manifest.get(key))
        except PathEscape:
            continue  # reported by _ref_problems
        if not path.is_file():
            continue
        try:
            data = loader(path)
        except CapsuleError as e:
            problems.append(Problem("error", e.problem, path.name))
            continue
        problems += schema_problems(data, schema, path.name)
        if schema == "environment":
            problems += _lock_file_problems(root, data)
        elif schema == "secret-redaction":
            problems += _chain_problems(data, path.name)
    return problems


def _chain_problems(proof: Any, where: str) -> list[Problem]:
    if not isinstance(proof, dict) or "chain_hash" not in proof:
        return []  # the schema check reports it
    rest = {k: v for k, v in proof.items() if k != "chain_hash"}
    expected = "sha256:" + hashlib.sha256(seal.canonical_json(rest)).hexdigest()
    if proof["chain_hash"] != expected:
        return [Problem("error", f"chain_hash {proof['chain_hash']} does not match the proof ({expected})", where)]
    return []


def _lock_file_problems(root: Path, env: Mapping[str, Any]) -> list[Problem]:
    python = env.get("python")
    rel = python.get("lock_file_ref") if isinstance(python, dict) else None
    if rel is None:
        return []
    try:
        path = inside(root, rel)
    except PathEscape as e:
        return [Problem("error", f"python.lock_file_ref: {e}", "env.lock")]
    if not path.is_file():
        return [Problem("error", f"python.lock_file_ref: {rel} is missing", "env.lock")]
    if not isinstance(python, dict) or sha256_file(path) != python.get("lock_file_hash"):
        return [Problem("error", f"{rel} does not match lock_file_hash", "env.lock")]
    return []


def _artifact_problems(root: Path, manifest: Mapping[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    for item in build.file_artifacts(manifest):
        rel = item.get("path")
        try:
            path = inside(root, rel)
        except PathEscape as e:
            problems.append(Problem("error", f"artifact {item.get('name')!r}: {e}", MANIFEST))
            continue
        if not path.is_file():
            problems.append(Problem("error", f"artifact {rel} is missing", MANIFEST))
        elif sha256_file(path) != item.get("content_hash"):
            problems.append(Problem("error", f"artifact {rel} does not match its content_hash", str(rel)))
    return problems


# --- evidence_digests: what binds every other file to the seal ----------------------

READ_DIRS = ("inputs/", "outputs/")  # every file below them may reach the build or the expected outcome


def files_read(root: Path, manifest: Mapping[str, Any], present: Sequence[str]) -> tuple[str, ...]:
    """The files of a run capsule that replay reads besides capsule.yaml (present ones only):
    every `*_ref` target (top level, `error.traceback_ref`, env.lock's `python.lock_file_ref`),
    and everything under inputs/ and outputs/. What a seal must bind for replay to obey it."""
    refs = [v for k, v in manifest.items() if k.endswith("_ref")]
    error = manifest.get("error")
    if isinstance(error, Mapping):
        refs.append(error.get("traceback_ref"))
    refs.append(_lock_file_ref(root, manifest))
    named = {r.removeprefix("./") for r in refs if isinstance(r, str) and r}
    return tuple(rel for rel in present if rel in named or rel.startswith(READ_DIRS))


def _lock_file_ref(root: Path, manifest: Mapping[str, Any]) -> object:
    try:
        env = load_yaml_mapping(inside(root, manifest.get("environment_ref")))
    except (CapsuleError, PathEscape, OSError):
        return None  # a broken env.lock is a problem of its own
    python = env.get("python")
    return python.get("lock_file_ref") if isinstance(python, Mapping) else None


def unbound_files(root: Path, manifest: Mapping[str, Any], present: Sequence[str]) -> tuple[str, ...]:
    """Of the files replay reads, those a seal over this manifest does not cover: not listed in
    `evidence_digests`, or all of them when the manifest has none (the seal binds capsule.yaml only)."""
    digests = manifest.get("evidence_digests")
    listed = digests if isinstance(digests, Mapping) else {}
    return tuple(rel for rel in files_read(root, manifest, present) if rel not in listed)


def _why_unbound(digests: object) -> str:
    return "not in evidence_digests" if isinstance(digests, Mapping) else \
        "the manifest has no evidence_digests, so the seal binds capsule.yaml alone"


def walk(root: Path) -> tuple[tuple[str, ...], tuple[Problem, ...]]:
    """Every file under ``root`` (relative, '/'-separated); an error for every symlink that leads out,
    and for every symlink under inputs/ or outputs/ (or those directories themselves): replay reads
    no file through a link (yamlload.inside), so the walk never follows one either."""
    files: list[str] = []
    problems: list[Problem] = []
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink() and not _resolves_inside(full, real_root):
                problems.append(Problem("error", f"symlink {rel} leads outside the capsule", rel))
            elif full.is_symlink() and (rel + "/").startswith(READ_DIRS):
                problems.append(Problem("error", f"{rel} is a symlink, and replay reads no file through one "
                                                 "(the seal binds paths, a link changes what they mean)", rel))
            if name in filenames:
                files.append(rel)
        if len(files) > MAX_FILES:
            problems.append(Problem("warning", f"more than {MAX_FILES} files; stopped listing", None))
            break
    return tuple(sorted(files)), tuple(problems)


def _resolves_inside(path: Path, real_root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def check_evidence(root: Path, digests: Mapping[str, Any], present: Sequence[str]) -> list[Problem]:
    """Each listed file exists with its SHA-256; unlisted files were added after sealing."""
    problems: list[Problem] = []
    for rel, entry in digests.items():
        problems += _check_digest(root, rel, entry)
    for rel in present:
        if rel not in digests and rel != NEVER_LISTED and not rel.startswith(".seal/"):
            problems.append(Problem("warning", f"{rel} is not in evidence_digests (added after sealing)", rel))
    return problems


def _check_digest(root: Path, rel: str, entry: Mapping[str, Any]) -> list[Problem]:
    try:
        path = inside(root, rel)
    except PathEscape as e:
        return [Problem("error", f"evidence_digests: {e}", MANIFEST)]
    if not path.is_file():
        return [Problem("error", f"{rel} is listed in evidence_digests but missing", rel)]
    try:
        actual = sha256_file(path)
        size = path.stat().st_size
    except OSError as e:
        return [Problem("error", f"{rel} cannot be read: {e.strerror or e}", rel)]
    if actual != entry["sha256"]:
        return [Problem("error", f"{rel} changed since sealing ({actual}, sealed {entry['sha256']})", rel)]
    if size != entry["size_bytes"]:
        return [Problem("warning", f"{rel} is {size} bytes, evidence_digests says {entry['size_bytes']}", rel)]
    return []


def sha256_file(path: Path) -> str:
    """``sha256:<hex>`` of a file, streamed (inputs may be large)."""
    with path.open("rb") as f:
        return "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()
