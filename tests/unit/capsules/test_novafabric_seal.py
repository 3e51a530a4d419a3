"""The NovaFabric seal: DSSE envelopes, both encodings, keys, trust, binding to capsule.yaml."""
from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from runner.capsules import novafabric, novafabric_seal
from runner.capsules.novafabric_seal import b64decode_any, pae, pae_legacy
from runner.capsules.verification import VerifyResult
from runner.errors import UsageError

from tests.support.seals import DANA, SEALED, public_pem, reseal, self_signed

@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    copy = tmp_path / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"
    shutil.copytree(SEALED, copy, symlinks=True)
    return copy


def _errors(result: VerifyResult) -> list[str]:
    return [p.message for p in result.problems if p.severity == "error"]


def _warnings(result: VerifyResult) -> list[str]:
    return [p.message for p in result.problems if p.severity == "warning"]


# --- encodings ------------------------------------------------------------------------


def test_both_base64_forms_decode_to_the_same_bytes() -> None:
    data = bytes(range(256))
    assert b64decode_any(base64.b64encode(data).decode()) == data
    assert b64decode_any(base64.urlsafe_b64encode(data).decode().rstrip("=")) == data
    with pytest.raises(ValueError):
        b64decode_any("not base64 at all!")
    with pytest.raises(ValueError):
        b64decode_any(42)


def test_pae_encodings_are_the_two_documented_byte_layouts() -> None:
    assert pae("t/x", b"hello") == b"DSSEv1 3 t/x 5 hello"
    assert pae_legacy("t/x", b"hello") == b"DSSEv1\x03\x00\x00\x00\x00\x00\x00\x00t/x\x05\x00\x00\x00\x00\x00\x00\x00hello"


# --- the real sealed example ----------------------------------------------------------


def test_real_seal_is_valid_and_trusted_with_dana_key() -> None:
    result = novafabric.verify(SEALED, [DANA])
    assert result.valid, _errors(result)
    assert result.sealed
    [signer] = result.signers
    assert signer.algorithm == "ecdsa-p256"
    assert signer.subject == "CN=dana@example.org"
    assert signer.keyid == "193eb6743a66bf9e92120204bcf7352dc5eb1ed111cf22699154d90fc39bf993"
    assert signer.signature_valid and signer.trusted is True
    assert result.trusted is True
    assert not _warnings(result)  # the log entry names the payload's capsule id


def test_real_seal_is_untrusted_with_another_key(tmp_path: Path) -> None:
    other = tmp_path / "other.pem"
    other.write_bytes(public_pem(ec.generate_private_key(ec.SECP256R1())))
    result = novafabric.verify(SEALED, [other])
    assert result.valid  # the signature still holds; only the trust answer changes
    assert result.signers[0].trusted is False
    assert result.trusted is False


def test_without_trust_keys_trust_is_unknown() -> None:
    result = novafabric.verify(SEALED, [])
    assert result.signers[0].trusted is None
    assert result.trusted is None


def test_trust_key_that_is_not_a_key_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("hello")
    with pytest.raises(UsageError, match="bad.pem: not a PEM public key"):
        novafabric.verify(SEALED, [bad])


def test_trust_key_may_be_a_certificate(tmp_path: Path, sealed: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    reseal(sealed, key, form="cert")
    cert = x509.load_der_x509_certificate(self_signed(key))
    trust = tmp_path / "cert.pem"
    trust.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    assert novafabric.verify(sealed, [trust]).trusted is True


# --- tampering ------------------------------------------------------------------------


def test_corrupted_signature_is_invalid(sealed: Path) -> None:
    path = sealed / ".seal" / "manifest.dsse"
    envelope = json.loads(path.read_text())
    sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
    sig[-1] ^= 0x01
    envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    path.write_text(json.dumps(envelope))
    result = novafabric.verify(sealed, [DANA])
    assert not result.valid
    assert "no valid signature over the manifest" in _errors(result)
    assert result.signers[0].signature_valid is False
    assert result.trusted is None  # trust is only asked of valid signatures


def test_capsule_yaml_edited_after_sealing_is_invalid(sealed: Path) -> None:
    text = (sealed / "capsule.yaml").read_text()
    (sealed / "capsule.yaml").write_text(text.replace("exit_code: 0", "exit_code: 3"))
    result = novafabric.verify(sealed, [DANA])
    assert not result.valid
    assert any("differs from the signed manifest" in e and "exit_code" in e for e in _errors(result))


def test_payload_binding_tells_true_from_one(sealed: Path) -> None:
    # YAML 0 and JSON false compare equal in Python; the canonical form does not.
    manifest = yaml.safe_load((sealed / "capsule.yaml").read_text())
    manifest["exit_code"] = False
    payload = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    reseal(sealed, ed25519.Ed25519PrivateKey.generate(), payload=payload)
    assert any("differs from the signed manifest" in e for e in _errors(novafabric.verify(sealed, [])))


def test_reformatted_yaml_with_the_same_values_still_binds(sealed: Path) -> None:
    manifest = yaml.safe_load((sealed / "capsule.yaml").read_text())
    (sealed / "capsule.yaml").write_text(json.dumps(manifest, indent=4))  # JSON is YAML too
    result = novafabric.verify(sealed, [DANA])
    assert result.valid, _errors(result)


def test_legacy_pae_with_unpadded_base64url_and_ed25519_is_valid(sealed: Path) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    reseal(sealed, key, legacy=True, urlsafe=True)
    envelope = json.loads((sealed / ".seal" / "manifest.dsse").read_text())
    assert "=" not in envelope["payload"]
    result = novafabric.verify(sealed, [])
    assert result.valid, _errors(result)
    assert result.signers[0].algorithm == "ed25519"
    assert result.signers[0].signature_valid


def test_pubkey_form_ecdsa_signature_is_valid(tmp_path: Path, sealed: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    reseal(sealed, key, form="pubkey")
    trust = tmp_path / "mine.pem"
    trust.write_bytes(public_pem(key))
    result = novafabric.verify(sealed, [trust])
    assert result.valid, _errors(result)
    assert result.signers[0].subject is None
    assert result.trusted is True


def test_cert_keyid_mismatch_is_a_warning(sealed: Path) -> None:
    reseal(sealed, ec.generate_private_key(ec.SECP256R1()), form="cert", keyid="0" * 64)
    result = novafabric.verify(sealed, [])
    assert result.valid
    assert any("is not the SHA-256 of its certificate" in w for w in _warnings(result))


def test_unsupported_key_type_gives_no_valid_signature(sealed: Path) -> None:
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    reseal(sealed, ed25519.Ed25519PrivateKey.generate())
    path = sealed / ".seal" / "manifest.dsse"
    envelope = json.loads(path.read_text())
    envelope["signatures"][0]["pubkey"] = base64.b64encode(public_pem(rsa_key)).decode()
    path.write_text(json.dumps(envelope))
    result = novafabric.verify(sealed, [])
    assert "no valid signature over the manifest" in _errors(result)
    assert any("unsupported key type" in w for w in _warnings(result))


def test_log_entry_naming_another_capsule_is_only_a_warning(sealed: Path) -> None:
    path = sealed / ".seal" / "log-entry.json"
    log = json.loads(path.read_text())
    log["entry"]["capsule_id"] = "0" * 64
    path.write_text(json.dumps(log))
    result = novafabric.verify(sealed, [DANA])
    assert result.valid
    assert any("log entry names capsule" in w for w in _warnings(result))


def test_envelope_that_is_not_dsse_is_an_error(sealed: Path) -> None:
    (sealed / ".seal" / "manifest.dsse").write_text('{"payloadType": "text/plain", "payload": "", "signatures": []}')
    assert any("unreadable seal" in e and "payloadType" in e for e in _errors(novafabric.verify(sealed, [])))


def test_seal_directory_without_envelope_is_an_error(sealed: Path) -> None:
    (sealed / ".seal" / "manifest.dsse").unlink()
    result = novafabric.verify(sealed, [])
    assert not result.valid
    assert ".seal/ holds no manifest.dsse" in _errors(result)


def test_envelope_with_a_flood_of_signatures_is_refused(sealed: Path) -> None:
    path = sealed / ".seal" / "manifest.dsse"
    envelope = json.loads(path.read_text())
    envelope["signatures"] *= novafabric_seal.MAX_SIGNATURES + 1
    path.write_text(json.dumps(envelope))
    assert any("more than" in e and "signatures" in e for e in _errors(novafabric.verify(sealed, [DANA])))
