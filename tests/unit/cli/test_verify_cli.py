"""`replay verify`: checks, problems, signers; exit 0 valid, 1 invalid, 2 unreadable."""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from runner.cli.main import main
from tests.examples import CI, EXAMPLES, MINIMAL, NOVA, TWIN
from tests.envelope import result_of

DANA = EXAMPLES / "novafabric" / "dana-p256.pub.pem"
DANA_KEYID = "193eb6743a66bf9e92120204bcf7352dc5eb1ed111cf22699154d90fc39bf993"



def verify_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", *args, "--json"])
    return code, result_of(capsys.readouterr().out)


def other_key(tmp_path: Path) -> Path:
    key = ec.generate_private_key(ec.SECP256R1()).public_key()
    path = tmp_path / "other.pem"
    path.write_bytes(key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return path


@pytest.mark.parametrize("path", [TWIN, CI, MINIMAL, NOVA], ids=lambda p: p.name)
def test_real_examples_are_valid(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = verify_json(capsys, str(path))
    assert code == 0 and data["valid"] is True
    assert data["checks"] and not [p for p in data["problems"] if p["severity"] == "error"]


def test_sealed_capsule_lists_its_signer_trusted_or_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(NOVA)]) == 0
    out = capsys.readouterr().out
    signer_line = next(x for x in out.splitlines() if DANA_KEYID in x)
    assert "ecdsa-p256" in signer_line and "CN=dana@example.org" in signer_line and "not checked" in signer_line
    assert out.splitlines()[0].startswith("valid") and "sealed: yes" in out.splitlines()[0]  # the answer first

    code, data = verify_json(capsys, str(NOVA), "--trust-key", str(DANA))
    assert code == 0 and data["trusted"] is True
    assert data["signers"] == [{"keyid": DANA_KEYID, "algorithm": "ecdsa-p256", "subject": "CN=dana@example.org",
                                "signature_valid": True, "trusted": True}]  # fmt: skip

    code, data = verify_json(capsys, str(NOVA), "--trust-key", str(other_key(tmp_path)))
    assert code == 1 and data["valid"] is False and data["signers"][0]["trusted"] is False


def test_tampered_capsule_is_invalid_with_every_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / NOVA.name
    shutil.copytree(NOVA, copy)
    (copy / "inputs" / "poem.txt").write_text("changed after sealing\n")
    (copy / "added.txt").write_text("extra\n")
    code, data = verify_json(capsys, str(copy))
    assert code == 1 and data["valid"] is False
    severities = {p["severity"] for p in data["problems"]}
    assert "error" in severities and "warning" in severities
    assert any(p["where"] == "inputs/poem.txt" for p in data["problems"] if p["severity"] == "error")
    assert main(["verify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "error:" in out and "warning:" in out and "INVALID" in out


def test_codeinstances_id_mismatch_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(CI.read_text())
    data["result"]["stdout"]["text"] = "goodbye\n"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    code, result = verify_json(capsys, str(path))
    assert code == 1 and any(p["severity"] == "error" for p in result["problems"])


def test_bad_trust_key_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.pem"
    assert main(["verify", str(NOVA), "--trust-key", str(missing)]) == 2
    assert capsys.readouterr().err == f"replay: error: --trust-key {missing}: no such file or directory\n"
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n")
    assert main(["verify", str(NOVA), "--trust-key", str(garbage)]) == 2
    assert capsys.readouterr().err == f"replay: error: --trust-key {garbage}: not a PEM public key or certificate\n"


def test_unreadable_capsule_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    assert main(["verify", str(junk)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(junk) in err and "not a capsule" in err
