"""What a seal binds is what replay obeys: every file replay reads from a sealed NovaFabric
capsule is covered by the seal, or the capsule does not verify and is not replayed."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import ec

from runner.capsules import novafabric, novafabric_verify as checks
from runner.capsules.trust import Trust
from runner.cli.main import main
from runner.errors import CapsuleError, CapsuleRefused, Exit
from tests.support.seals import SEALED, public_pem, reseal

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "novafabric" / "minimal-run"


@pytest.fixture(scope="module")
def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture
def pem(tmp_path: Path, key: ec.EllipticCurvePrivateKey) -> Path:
    path = tmp_path / "team.pub.pem"
    path.write_bytes(public_pem(key))
    return path


def _resealed(dest: Path, key: ec.EllipticCurvePrivateKey, *, unlisted: tuple[str, ...] = (),
              no_digests: bool = False, removed: tuple[str, ...] = ()) -> Path:
    """A copy of the sealed example, sealed anew with `key` over a manifest whose
    evidence_digests leave out `unlisted` (or have no evidence_digests at all)."""
    shutil.copytree(SEALED, dest, symlinks=True)
    manifest = yaml.safe_load((dest / "capsule.yaml").read_text())
    if no_digests:
        del manifest["evidence_digests"]
    for rel in unlisted:
        del manifest["evidence_digests"][rel]
    for rel in removed:
        (dest / rel).unlink()
    (dest / "capsule.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    reseal(dest, key)
    return dest


def _files_read(capsule: Path) -> tuple[str, ...]:
    manifest = yaml.safe_load((capsule / "capsule.yaml").read_text())
    present, _ = checks.walk(capsule)
    return checks.files_read(capsule, manifest, present)


def _errors(capsule: Path, pem: Path) -> list[str]:
    return [p.message for p in novafabric.verify(capsule, [pem]).problems if p.severity == "error"]


def test_the_resealed_example_binds_everything_replay_reads(tmp_path: Path, key: ec.EllipticCurvePrivateKey,
                                                             pem: Path) -> None:
    capsule = _resealed(tmp_path / "c", key)
    result = novafabric.verify(capsule, [pem])
    assert result.valid and result.trusted is True and result.unbound == ()


def test_replay_reads_the_pointers_inputs_and_outputs() -> None:
    read = set(_files_read(SEALED))
    assert {"env.lock", "replay.yaml", "redaction-proof.json", "trace.jsonl", "outputs/stdout.txt",
            "inputs/poem.txt", "inputs/wordcount.py"} <= read
    assert "capsule.yaml" not in read and not any(r.startswith(".seal/") for r in read)


def test_every_file_replay_reads_must_be_bound_by_the_seal(tmp_path: Path, key: ec.EllipticCurvePrivateKey,
                                                            pem: Path) -> None:
    """Walks the one list of files replay reads: a file added to it later is covered too."""
    for i, rel in enumerate(_files_read(SEALED)):
        capsule = _resealed(tmp_path / f"c{i}", key, unlisted=(rel,))
        result = novafabric.verify(capsule, [pem])
        assert result.trusted is True  # the signature is good: it just does not cover the file
        assert result.unbound == (rel,)
        assert any(rel in m and "not bound by the seal" in m for m in _errors(capsule, pem)), rel
        # NovaFabric's own rule stays: the extra file is reported as a warning too
        assert any(p.severity == "warning" and "added after sealing" in p.message and p.where == rel
                   for p in result.problems)
        with pytest.raises(CapsuleRefused) as refused:
            Trust((pem,), require_valid=True).admit(str(capsule), result)
        assert rel in refused.value.line() and refused.value.exit_code == Exit.NEGATIVE


def test_a_policy_added_after_sealing_is_refused_not_obeyed(tmp_path: Path, key: ec.EllipticCurvePrivateKey,
                                                            pem: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsule = _resealed(tmp_path / "c", key, unlisted=("replay.yaml",), removed=("replay.yaml",))
    assert _errors(capsule, pem) == []  # sealed without a policy: valid (a missing replay.yaml is the minimal one)
    (capsule / "replay.yaml").write_text("schema_version: 0.1.0\nnetwork:\n  egress: allow\n")
    assert main(["verify", str(capsule), "--trust-key", str(pem)]) == 1
    assert "replay.yaml is not bound by the seal" in capsys.readouterr().out
    # refused before anything is built: no engine is asked (REPLAY_REQUIRE_ENGINE plays no part)
    assert main([str(capsule), "--trust-key", str(pem), "--require-valid"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
    assert len(errors) == 1 and "replay.yaml" in errors[0] and "not replayed" in errors[0]


def test_a_seal_without_evidence_digests_binds_capsule_yaml_alone(tmp_path: Path, key: ec.EllipticCurvePrivateKey,
                                                                  pem: Path) -> None:
    capsule = _resealed(tmp_path / "c", key, no_digests=True)
    result = novafabric.verify(capsule, [pem])
    assert result.trusted is True
    assert set(result.unbound) == set(_files_read(capsule)) and "env.lock" in result.unbound
    assert any("no evidence_digests" in m for m in _errors(capsule, pem))
    with pytest.raises(CapsuleRefused):
        Trust().admit(str(capsule), result)
    Trust(allow_unverified=True).admit(str(capsule), result)  # applied, named at the top of the report


def test_an_unsealed_capsule_is_unchanged(tmp_path: Path) -> None:
    result = novafabric.verify(EXAMPLE, [])
    assert result.valid and not result.sealed and result.unbound == ()


def test_require_valid_needs_a_trust_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "--require-valid"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--require-valid needs at least one --trust-key" in err[0]


# --- one view of the tree: no file is read through a symlink ---------------------------------

DANA = SEALED.parent / "dana-p256.pub.pem"


def _outputs_linked_into_seal(tmp_path: Path) -> Path:
    """The shipped signed example with outputs/ replaced by a link to a directory under .seal/
    holding the sealed stdout.txt and a new stderr.txt (the walk saw no outputs/stderr.txt)."""
    capsule = tmp_path / "c"
    shutil.copytree(SEALED, capsule, symlinks=True)
    hidden = capsule / ".seal" / "out"
    shutil.move(capsule / "outputs", hidden)
    (hidden / "stderr.txt").write_text("an expectation nobody sealed\n")
    (capsule / "outputs").symlink_to(".seal/out", target_is_directory=True)
    return capsule


def test_a_directory_replaced_by_a_symlink_does_not_pass_the_seal(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    capsule = _outputs_linked_into_seal(tmp_path)
    result = novafabric.verify(capsule, [DANA])
    assert result.trusted is True and not result.valid  # the signature is good; the tree is not what it binds
    assert any("outputs is a symlink" in m for m in _errors(capsule, DANA))
    assert main(["verify", str(capsule), "--trust-key", str(DANA)]) == 1
    assert capsys.readouterr().out.startswith("INVALID")
    # replay agrees: it reads nothing through the link, so it neither builds nor expects the new stderr
    parsed = novafabric.detect(capsule)
    assert parsed is not None
    with pytest.raises(CapsuleError, match="passes through the symlink outputs"):
        novafabric.read(capsule, parsed)
    code = main([str(capsule), "--trust-key", str(DANA), "--require-valid"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
    assert code == Exit.BAD_INPUT and len(err) == 1 and "symlink outputs" in err[0], err


def test_a_linked_file_under_outputs_is_refused_by_both(tmp_path: Path) -> None:
    capsule = tmp_path / "c"
    shutil.copytree(SEALED, capsule, symlinks=True)
    sealed_copy = capsule / ".seal" / "stdout.txt"
    shutil.move(capsule / "outputs" / "stdout.txt", sealed_copy)
    (capsule / "outputs" / "stdout.txt").symlink_to("../.seal/stdout.txt")
    assert any("outputs/stdout.txt is a symlink" in m for m in _errors(capsule, DANA))
    parsed = novafabric.detect(capsule)
    assert parsed is not None
    with pytest.raises(CapsuleError, match="passes through the symlink outputs/stdout.txt"):
        novafabric.read(capsule, parsed)


def test_a_linked_pointer_file_is_refused_by_both(tmp_path: Path) -> None:
    capsule = tmp_path / "c"
    shutil.copytree(SEALED, capsule, symlinks=True)
    shutil.move(capsule / "env.lock", capsule / ".seal" / "env.lock")
    (capsule / "env.lock").symlink_to(".seal/env.lock")
    assert any("passes through the symlink env.lock" in m for m in _errors(capsule, DANA))
    parsed = novafabric.detect(capsule)
    assert parsed is not None
    with pytest.raises(CapsuleError, match="passes through the symlink env.lock"):
        novafabric.read(capsule, parsed)
