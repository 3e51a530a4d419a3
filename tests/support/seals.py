"""NovaFabric seals made in a test: the shipped sealed example, and a fresh DSSE envelope over a
capsule with a test's own key (both encodings, a public key or a self-signed certificate)."""
from __future__ import annotations

import base64
import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.x509.oid import NameOID

from runner.capsules.novafabric_seal import pae, pae_legacy

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "novafabric"
SEALED = EXAMPLES / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"
DANA = EXAMPLES / "dana-p256.pub.pem"
PAYLOAD_TYPE = "application/vnd.novafabric.capsule+json"


def public_pem(key: Any) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def sign(key: Any, data: bytes) -> bytes:
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return key.sign(data)
    return key.sign(data, ec.ECDSA(hashes.SHA256()))


def b64(data: bytes, urlsafe: bool) -> str:
    if urlsafe:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")
    return base64.b64encode(data).decode()


def self_signed(key: ec.EllipticCurvePrivateKey) -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tester@example.org")])
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER)


def reseal(
    capsule: Path,
    key: Any,
    *,
    legacy: bool = False,
    urlsafe: bool = False,
    form: str = "pubkey",
    payload: bytes | None = None,
    keyid: str | None = None,
) -> bytes:
    """Write a fresh .seal/manifest.dsse over capsule.yaml (or ``payload``); returns the payload."""
    if payload is None:
        manifest = yaml.safe_load((capsule / "capsule.yaml").read_text())
        payload = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    encode = pae_legacy if legacy else pae
    entry: dict[str, str] = {"sig": b64(sign(key, encode(PAYLOAD_TYPE, payload)), urlsafe)}
    if form == "cert":
        der = self_signed(key)
        entry["cert"] = base64.b64encode(der).decode()
        entry["keyid"] = keyid if keyid is not None else hashlib.sha256(der).hexdigest()
    else:
        entry["pubkey"] = base64.b64encode(public_pem(key)).decode()
        entry["keyid"] = keyid or "test-key"
    envelope = {"payloadType": PAYLOAD_TYPE, "payload": b64(payload, urlsafe), "signatures": [entry]}
    seal = capsule / ".seal"
    seal.mkdir(exist_ok=True)
    (seal / "manifest.dsse").write_text(json.dumps(envelope, indent=2))
    log = {"leaf_index": 0, "entry": {"capsule_id": hashlib.sha256(payload).hexdigest(), "keyid": entry["keyid"]}}
    (seal / "log-entry.json").write_text(json.dumps(log))
    return payload
