"""NovaFabric's seal: the DSSE envelope in ``.seal/`` that signs the manifest.

The envelope's payload is the manifest (with ``evidence_digests``) as canonical
JSON; capsule.yaml is bound to it by value, and evidence_digests bind every other
file (checked in novafabric_verify.py). Both DSSE pre-authentication encodings and both
base64 alphabets are accepted because envelopes made before NovaFabric 0.103 used
the legacy ones.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from ..errors import CapsuleError, UsageError
from . import jsonload
from .verification import Problem, Signer
from .yamlload import PathEscape, inside

PAYLOAD_TYPE = "application/vnd.novafabric.capsule+json"
ENVELOPE = ".seal/manifest.dsse"
TIMESTAMP = ".seal/manifest.dsse.tsr"
LOG_ENTRY = ".seal/log-entry.json"
MAX_SIGNATURES = 16

PublicKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey


@dataclass(frozen=True)
class SealReport:
    problems: tuple[Problem, ...]
    signers: tuple[Signer, ...]
    checks: tuple[str, ...]
    capsule_id: str | None  # SHA-256 hex of the payload


def b64decode_any(text: object) -> bytes:
    """Standard padded base64 or unpadded base64url; ValueError otherwise."""
    if not isinstance(text, str):
        raise ValueError("not a base64 string")
    s = text.strip()
    altchars = b"-_" if ("-" in s or "_" in s) else None
    s += "=" * (-len(s) % 4)
    try:
        return base64.b64decode(s, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not valid base64") from None


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding (lengths as ASCII decimal)."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)


def pae_legacy(payload_type: str, body: bytes) -> bytes:
    """The encoding of envelopes made before NovaFabric 0.103 (little-endian u64 lengths)."""
    t = payload_type.encode("utf-8")
    return b"DSSEv1" + struct.pack("<Q", len(t)) + t + struct.pack("<Q", len(body)) + body


def canonical_json(value: Any) -> bytes:
    """The canonical form NovaFabric signs: sorted keys, no blanks, ASCII escapes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


def load_trust_keys(paths: Sequence[Path]) -> tuple[bytes, ...]:
    """Each trusted key as SubjectPublicKeyInfo DER (a PEM public key or certificate file)."""
    keys = []
    for path in paths:
        try:
            pem = path.read_bytes()
        except OSError as e:
            raise UsageError(f"{path}: cannot read trust key: {e.strerror or e}") from None
        keys.append(_spki(_pem_key(path, pem)))
    return tuple(keys)


def _pem_key(path: Path, pem: bytes) -> Any:
    try:
        return serialization.load_pem_public_key(pem)
    except ValueError:
        pass
    try:
        return x509.load_pem_x509_certificate(pem).public_key()
    except ValueError:
        raise UsageError(f"{path}: not a PEM public key or certificate") from None


def _spki(key: Any) -> bytes:
    der: bytes = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return der


def check_seal(root: Path, manifest: Mapping[str, Any], trusted: tuple[bytes, ...] | None) -> SealReport:
    """Check the envelope against capsule.yaml; ``trusted`` None means no --trust-key given."""
    problems: list[Problem] = []
    checks = ["seal: DSSE envelope"]
    try:
        envelope = jsonload.load(inside(root, ENVELOPE))
        payload_type, payload, sigs = _envelope_parts(envelope)
    except (CapsuleError, ValueError) as e:
        problems.append(Problem("error", f"unreadable seal: {_problem_text(e)}", ENVELOPE))
        return SealReport(tuple(problems), (), tuple(checks), None)
    capsule_id = hashlib.sha256(payload).hexdigest()
    problems += _check_payload(payload, manifest)
    signers = [_check_signature(sig, payload_type, payload, trusted, problems) for sig in sigs]
    if not any(s.signature_valid for s in signers):
        problems.append(Problem("error", "no valid signature over the manifest", ENVELOPE))
    problems += _check_log_entry(root, capsule_id) + _check_timestamp(root)
    checks += ["seal: payload equals capsule.yaml", "seal: signatures", "seal: log entry (reported)"]
    return SealReport(tuple(problems), tuple(signers), tuple(checks), capsule_id)


def _problem_text(e: Exception) -> str:
    return e.problem if isinstance(e, CapsuleError) else str(e)


def _envelope_parts(envelope: Any) -> tuple[str, bytes, list[Any]]:
    if not isinstance(envelope, dict):
        raise ValueError("the envelope is not a JSON object")
    payload_type = envelope.get("payloadType")
    if payload_type != PAYLOAD_TYPE:
        raise ValueError(f"payloadType {payload_type!r} is not {PAYLOAD_TYPE!r}")
    try:
        payload = b64decode_any(envelope.get("payload"))
    except ValueError as e:
        raise ValueError(f"payload: {e}") from None
    sigs = envelope.get("signatures")
    if not isinstance(sigs, list) or not sigs:
        raise ValueError("the envelope has no signatures")
    if len(sigs) > MAX_SIGNATURES:
        raise ValueError(f"more than {MAX_SIGNATURES} signatures")
    return payload_type, payload, sigs


def _check_payload(payload: bytes, manifest: Mapping[str, Any]) -> list[Problem]:
    try:
        signed = json.loads(payload)
    except (ValueError, RecursionError):
        return [Problem("error", "the signed payload is not JSON", ENVELOPE)]
    # Compared through the canonical form, not ==, so that true never equals 1.
    if canonical_json(signed) != canonical_json(dict(manifest)):
        changed = _differing_keys(signed, manifest)
        return [Problem("error", f"capsule.yaml differs from the signed manifest ({changed})", "capsule.yaml")]
    return []


def _differing_keys(signed: Any, manifest: Mapping[str, Any]) -> str:
    if not isinstance(signed, dict):
        return "the payload is not an object"
    keys = sorted(
        k for k in set(signed) | set(manifest) if canonical_json(signed.get(k)) != canonical_json(manifest.get(k))
    )
    return "members: " + ", ".join(keys[:8])


def _check_signature(
    entry: Any, payload_type: str, payload: bytes, trusted: tuple[bytes, ...] | None, problems: list[Problem]
) -> Signer:
    where = ENVELOPE
    keyid = entry.get("keyid") if isinstance(entry, dict) else None
    keyid = keyid if isinstance(keyid, str) else None
    try:
        key, subject = _signer_key(entry, keyid, problems)
        sig = b64decode_any(entry.get("sig"))
    except ValueError as e:
        problems.append(Problem("warning", f"signature {keyid or '?'}: {e}", where))
        return Signer(keyid, "unknown", None, signature_valid=False, trusted=None)
    algorithm = "ed25519" if isinstance(key, ed25519.Ed25519PublicKey) else "ecdsa-p256"
    valid = any(_verifies(key, sig, data) for data in (pae(payload_type, payload), pae_legacy(payload_type, payload)))
    if not valid:
        problems.append(Problem("warning", f"signature {keyid or '?'} does not verify", where))
    is_trusted = None if trusted is None else _spki(key) in trusted
    return Signer(keyid, algorithm, subject, signature_valid=valid, trusted=is_trusted)


def _signer_key(entry: Any, keyid: str | None, problems: list[Problem]) -> tuple[PublicKey, str | None]:
    try:
        return _parse_signer_key(entry, keyid, problems)
    except (TypeError, UnsupportedAlgorithm) as e:  # a PEM of an exotic key kind
        raise ValueError(f"unusable key: {e}") from None


def _parse_signer_key(entry: Any, keyid: str | None, problems: list[Problem]) -> tuple[PublicKey, str | None]:
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    if "cert" in entry:
        der = b64decode_any(entry["cert"])
        cert = x509.load_der_x509_certificate(der)  # ValueError on garbage
        if keyid != hashlib.sha256(der).hexdigest():
            problems.append(Problem("warning", f"keyid {keyid!r} is not the SHA-256 of its certificate", ENVELOPE))
        return _supported(cert.public_key()), cert.subject.rfc4514_string()
    if "pubkey" in entry:
        return _supported(serialization.load_pem_public_key(b64decode_any(entry["pubkey"]))), None
    raise ValueError("neither cert nor pubkey given")


def _supported(key: Any) -> PublicKey:
    if isinstance(key, ed25519.Ed25519PublicKey):
        return key
    if isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
        return key
    raise ValueError(f"unsupported key type {type(key).__name__} (ECDSA P-256 or Ed25519 expected)")


def _verifies(key: PublicKey, sig: bytes, data: bytes) -> bool:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(sig, data)
        else:
            key.verify(sig, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def _check_log_entry(root: Path, capsule_id: str) -> list[Problem]:
    if not (root / LOG_ENTRY).exists():
        return [Problem("info", "no transparency log entry", LOG_ENTRY)]
    try:
        entry = jsonload.load(inside(root, LOG_ENTRY))
    except (CapsuleError, PathEscape) as e:
        return [Problem("warning", f"unreadable log entry: {_problem_text(e)}", LOG_ENTRY)]
    inner = entry.get("entry") if isinstance(entry, dict) else None
    logged = inner.get("capsule_id") if isinstance(inner, dict) else None
    if logged != capsule_id:
        return [Problem("warning", f"log entry names capsule {logged!r}, the payload is {capsule_id}", LOG_ENTRY)]
    where = f"leaf {entry.get('leaf_index')} of tree size {entry.get('tree_size')}"
    return [Problem("info", f"log entry: {where} (inclusion not verified)", LOG_ENTRY)]


def _check_timestamp(root: Path) -> list[Problem]:
    path = root / TIMESTAMP
    if not path.is_file() or path.is_symlink():
        return [Problem("info", "no timestamp token", TIMESTAMP)]
    size = path.stat().st_size
    text = "empty timestamp token" if size == 0 else f"timestamp token of {size} bytes (not verified)"
    return [Problem("info", text, TIMESTAMP)]
