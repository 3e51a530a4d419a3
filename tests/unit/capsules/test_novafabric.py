"""The NovaFabric Run Capsule reader: detect, read into the model, verify every problem."""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest
import yaml

from runner.capsules import novafabric, read_capsule, yamlload
from runner.capsules.model import Body, Capsule, Format
from runner.capsules.verification import VerifyResult
from runner.errors import CapsuleError, UnsupportedVersion

EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "novafabric"
MINIMAL = EXAMPLES / "minimal-run"
SEALED = EXAMPLES / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"


def _read(path: Path) -> Capsule:
    parsed = novafabric.detect(path)
    assert parsed is not None
    return novafabric.read(path, parsed)


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst, symlinks=True)
    return dst


def _edit_manifest(capsule: Path, **changes: object) -> None:
    manifest = yaml.safe_load((capsule / "capsule.yaml").read_text())
    manifest.update(changes)
    (capsule / "capsule.yaml").write_text(yaml.safe_dump(manifest))


def _errors(result: VerifyResult) -> list[str]:
    return [p.message for p in result.problems if p.severity == "error"]


def _warnings(result: VerifyResult) -> list[str]:
    return [p.message for p in result.problems if p.severity == "warning"]


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    return _copy(MINIMAL, tmp_path)


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    return _copy(SEALED, tmp_path)


# --- detect ---------------------------------------------------------------------------


def test_detects_the_directory_and_its_capsule_yaml() -> None:
    by_dir = novafabric.detect(MINIMAL)
    by_file = novafabric.detect(MINIMAL / "capsule.yaml")
    assert by_dir is not None and by_file is not None
    assert by_dir.root == by_file.root == MINIMAL
    assert by_dir.manifest is not None and by_dir.manifest["run_id"] == "01KR2E9P1TRANFT6EP0JAMTTQM"


def test_other_files_are_not_claimed() -> None:
    assert novafabric.detect(MINIMAL / "env.lock") is None
    assert novafabric.detect(EXAMPLES / "dana-p256.pub.pem") is None


def test_directory_without_capsule_yaml_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(CapsuleError) as info:
        novafabric.detect(tmp_path)
    assert info.value.line() == f"{tmp_path}: directory has no capsule.yaml (not a NovaFabric Run Capsule)"


def test_registry_reads_it_and_explains_a_bare_directory(tmp_path: Path) -> None:
    assert read_capsule(SEALED / "capsule.yaml").provenance.format is Format.NOVAFABRIC
    with pytest.raises(CapsuleError, match="directory has no capsule.yaml"):
        read_capsule(tmp_path)


def test_yaml_mapping_that_is_not_a_manifest_is_refused(tmp_path: Path) -> None:
    (tmp_path / "capsule.yaml").write_text("name: something else\n")
    with pytest.raises(CapsuleError, match="not a NovaFabric manifest"):
        novafabric.detect(tmp_path)


# --- read: the real examples ------------------------------------------------------------


def test_reads_minimal_run() -> None:
    capsule = _read(MINIMAL)
    assert capsule.provenance.format is Format.NOVAFABRIC
    assert capsule.provenance.format_version == "0.1.0"
    assert capsule.provenance.generator == "novafabric 0.2.0"
    assert capsule.provenance.capsule_id == "01KR2E9P1TRANFT6EP0JAMTTQM"
    assert capsule.provenance.seal_present is False
    cmd = capsule.command
    assert cmd.argv == ("python", "examples/minimal-agent-run/agent.py")
    assert (cmd.cwd, cmd.cwd_is_host_path) == ("~/projects/novafabric", True)
    assert (cmd.exit_code, cmd.status, cmd.outcome, cmd.duration_ms) == (0, "success", "pass", 324)
    assert cmd.stdout is not None and cmd.stdout.text is not None
    assert cmd.stdout.text.startswith("Running minimal agent\u2026\nAgent returned: done\n")
    assert cmd.stderr == Body(text="")  # no outputs/stderr.txt: the stream was empty
    assert (capsule.platform.os, capsule.platform.arch, capsule.platform.cpu_count) == ("linux", "x86_64", 20)
    assert capsule.platform.memory_bytes == 33281683456
    assert capsule.platform.distro is None and capsule.platform.libc is None
    assert dict(capsule.runtimes) == {"python": "3.12.3"}


def test_minimal_run_python_environment() -> None:
    capsule = _read(MINIMAL)
    resolved = capsule.resolved.python
    assert len(resolved) == 46
    assert resolved["pyyaml"] == "6.0.3"  # recorded as PyYAML
    assert resolved["typing-extensions"] == "4.15.0"  # recorded as typing_extensions
    assert resolved["mypy-extensions"] == "1.1.0"
    assert "PyYAML" not in resolved
    assert capsule.python is not None
    assert (capsule.python.interpreter, capsule.python.version, capsule.python.lock_file_kind) == ("cpython", "3.12.3", "uv.lock")
    assert capsule.python.lock_file_sha256 == "4f587b9758156bcff1a49a48cb89630aa15a49fa3344bed0d8db72070e38fee1"
    [pm] = capsule.package_managers
    assert (pm.name, pm.ecosystem, pm.lockfile) == ("uv", "python", None)
    assert pm.lockfile_sha256 == capsule.python.lock_file_sha256


def test_minimal_run_env_locale_policy_redaction() -> None:
    capsule = _read(MINIMAL)
    assert set(capsule.env) == {"HOME", "LANG", "PATH", "SHELL", "USER", "USERNAME"}
    assert capsule.env["HOME"].value == "/home/mohsen" and capsule.env["HOME"].host_specific
    assert capsule.env["USERNAME"].host_specific
    assert capsule.env["LANG"].state == "set" and not capsule.env["LANG"].host_specific
    assert (capsule.locale.time_zone, capsule.locale.lang, capsule.locale.lc_all) == ("UTC", "en_US.UTF-8", None)
    assert capsule.wallclock_at_start == "2026-05-08T00:02:46.970466Z"
    assert capsule.policy is not None and capsule.policy.egress is None and capsule.policy.freeze_clock is None
    assert capsule.redaction is not None and capsule.redaction.proof_findings == 0
    assert capsule.repo is None
    assert capsule.inputs == () and capsule.expected_outputs == ()


def test_reads_sealed_example() -> None:
    capsule = _read(SEALED)
    assert capsule.provenance.seal_present is True
    assert capsule.provenance.generator == "novafabric 0.3.1"
    assert capsule.command.argv == ("python3", "wordcount.py", "poem.txt")
    assert capsule.command.stdout == Body(text="3 the\n2 and\n1 bat\n")
    assert [(a.name, a.path, a.logical_path) for a in capsule.inputs] == [
        ("script", "inputs/wordcount.py", "wordcount.py"),
        ("poem", "inputs/poem.txt", "poem.txt"),
    ]
    assert capsule.inputs[1].sha256 == "110917a343cc686b5c3ede42bb1778086de1f1bbccdcfff6fa9fd0dc1f653e02"
    assert capsule.inputs[1].size_bytes == 32
    assert capsule.policy is not None and capsule.policy.egress == "deny"
    assert capsule.locale.time_zone == "Europe/Lisbon"
    assert dict(capsule.resolved.python) == {"six": "1.16.0"}
    assert capsule.package_managers[0].name == "pip"
    assert capsule.env["TZ"].value == "Europe/Lisbon"


def test_both_examples_verify_valid() -> None:
    for example in (MINIMAL, SEALED):
        result = novafabric.verify(example, [])
        assert result.valid, _errors(result)
        assert result.format == "novafabric"
    assert novafabric.verify(SEALED, []).sealed is True
    assert novafabric.verify(MINIMAL, []).sealed is False


# --- read: variations -------------------------------------------------------------------


def test_failed_run_with_git_and_error(minimal: Path) -> None:
    git = {"commit_sha": "a" * 40, "branch": "main", "dirty": True, "remote_url": "https://example.org/r.git"}
    error = {"type": "ToolInvocationError", "message": "boom", "traceback_ref": None}
    _edit_manifest(minimal, status="failure", exit_code=1, error=error, git=git)
    capsule = _read(minimal)
    assert (capsule.command.outcome, capsule.command.exit_code) == ("fail", 1)
    assert (capsule.command.error_type, capsule.command.error_message) == ("ToolInvocationError", "boom")
    assert capsule.failed
    assert capsule.repo is not None
    assert (capsule.repo.commit, capsule.repo.branch, capsule.repo.dirty) == ("a" * 40, "main", True)
    assert capsule.repo.remote == "https://example.org/r.git" and capsule.repo.diff is None


def test_success_status_with_nonzero_exit_is_a_failure(minimal: Path) -> None:
    _edit_manifest(minimal, exit_code=2)
    assert _read(minimal).command.outcome == "fail"


def test_absent_stdout_is_empty_and_binary_stderr_is_base64(minimal: Path) -> None:
    (minimal / "outputs" / "stdout.txt").unlink()
    (minimal / "outputs" / "stderr.txt").write_bytes(b"\xff\xfe oops")
    cmd = _read(minimal).command
    assert cmd.stdout == Body(text="")
    assert cmd.stderr is not None and cmd.stderr.base64 is not None and cmd.stderr.data == b"\xff\xfe oops"


def test_missing_replay_yaml_is_the_minimal_policy(minimal: Path) -> None:
    (minimal / "replay.yaml").unlink()
    capsule = _read(minimal)
    assert capsule.policy is not None and capsule.policy.egress is None
    assert novafabric.verify(minimal, []).valid


def test_frozen_clock_without_injected_now_uses_the_captured_start(minimal: Path) -> None:
    policy = {"schema_version": "0.1.0", "time": {"freeze_clock": True, "injected_now": None},
              "network": {"egress": "policy", "allowed_hosts": ["pypi.org"]}}
    (minimal / "replay.yaml").write_text(yaml.safe_dump(policy))
    p = _read(minimal).policy
    assert p is not None
    assert (p.freeze_clock, p.injected_now) == (True, "2026-05-08T00:02:46.970466Z")
    assert (p.egress, p.allowed_hosts) == ("policy", ("pypi.org",))


def test_unknown_member_is_ignored_by_read_and_reported_by_verify(minimal: Path) -> None:
    _edit_manifest(minimal, shiny_new_field={"x": 1})
    assert _read(minimal).command.argv[0] == "python"
    result = novafabric.verify(minimal, [])
    assert result.valid
    assert "shiny_new_field: not in run-capsule.schema.json; ignored" in _warnings(result)


# --- versions and schema ------------------------------------------------------------------


def test_newer_schema_version_is_refused_naming_both(minimal: Path) -> None:
    _edit_manifest(minimal, schema_version="2.0.0")
    with pytest.raises(UnsupportedVersion) as info:
        novafabric.detect(minimal)
    assert "2.0.0" in info.value.line() and "0.x and 1.x" in info.value.line() and "upgrade" in info.value.line()
    with pytest.raises(UnsupportedVersion):
        novafabric.verify(minimal, [])


def test_version_1_is_understood(minimal: Path) -> None:
    _edit_manifest(minimal, schema_version="1.0.0")
    assert _read(minimal).provenance.format_version == "1.0.0"


def test_schema_violation(minimal: Path) -> None:
    _edit_manifest(minimal, status="weird")
    with pytest.raises(CapsuleError) as info:
        _read(minimal)
    assert info.value.path.endswith("capsule.yaml") and "status" in info.value.problem
    result = novafabric.verify(minimal, [])
    assert not result.valid
    assert any(e.startswith("status: 'weird' is not one of") for e in _errors(result))


def test_env_lock_schema_violation_is_listed_with_the_others(minimal: Path) -> None:
    env = yaml.safe_load((minimal / "env.lock").read_text())
    env["mode"] = "chaotic"
    (minimal / "env.lock").write_text(yaml.safe_dump(env))
    _edit_manifest(minimal, duration_ms=-1)
    errors = [(p.where, p.message.split(":")[0]) for p in novafabric.verify(minimal, []).problems if p.severity == "error"]
    assert ("env.lock", "mode") in errors and ("capsule.yaml", "duration_ms") in errors


# --- evidence_digests -------------------------------------------------------------------


def test_changed_input_file_is_invalid(sealed: Path) -> None:
    (sealed / "inputs" / "poem.txt").write_text("the cat and the hat and the rat\n")
    errors = _errors(novafabric.verify(sealed, []))
    assert any(e.startswith("inputs/poem.txt changed since sealing") for e in errors)
    assert "artifact inputs/poem.txt does not match its content_hash" in errors


def test_missing_file_is_invalid(sealed: Path) -> None:
    (sealed / "model-calls.jsonl").unlink()
    errors = _errors(novafabric.verify(sealed, []))
    assert "model-calls.jsonl is listed in evidence_digests but missing" in errors


def test_extra_file_replay_does_not_read_is_only_a_warning(sealed: Path) -> None:
    (sealed / "notes.txt").write_text("added later")
    result = novafabric.verify(sealed, [])
    assert result.valid
    assert "notes.txt is not in evidence_digests (added after sealing)" in _warnings(result)


def test_extra_file_replay_reads_is_invalid_in_a_sealed_capsule(sealed: Path) -> None:
    (sealed / "outputs" / "late.txt").write_text("added later")
    result = novafabric.verify(sealed, [])
    assert not result.valid and result.unbound == ("outputs/late.txt",)
    assert "outputs/late.txt is not in evidence_digests (added after sealing)" in _warnings(result)


def test_size_mismatch_alone_is_a_warning(minimal: Path) -> None:
    digest = "sha256:" + hashlib.sha256((minimal / "trace.jsonl").read_bytes()).hexdigest()
    _edit_manifest(minimal, evidence_digests={"trace.jsonl": {"sha256": digest, "size_bytes": 1}})
    result = novafabric.verify(minimal, [])
    assert result.valid
    assert any(w.startswith("trace.jsonl is 298 bytes") for w in _warnings(result))
    assert "env.lock is not in evidence_digests (added after sealing)" in _warnings(result)


def test_evidence_key_climbing_out_is_invalid(sealed: Path) -> None:
    manifest = yaml.safe_load((sealed / "capsule.yaml").read_text())
    manifest["evidence_digests"]["../outside.txt"] = {"sha256": "sha256:" + "0" * 64, "size_bytes": 0}
    (sealed / "capsule.yaml").write_text(yaml.safe_dump(manifest))
    errors = _errors(novafabric.verify(sealed, []))
    assert "evidence_digests: '../outside.txt' climbs out with '..'" in errors


def test_malformed_evidence_digests_is_a_schema_error(minimal: Path) -> None:
    _edit_manifest(minimal, evidence_digests={"trace.jsonl": {"sha256": "md5:abc"}})
    errors = _errors(novafabric.verify(minimal, []))
    assert any(e.startswith("evidence_digests.trace.jsonl") for e in errors)


def test_tampered_chain_hash_is_invalid(minimal: Path) -> None:
    proof = json.loads((minimal / "redaction-proof.json").read_text())
    proof["bytes_scanned"] = 1
    (minimal / "redaction-proof.json").write_text(json.dumps(proof))
    errors = _errors(novafabric.verify(minimal, []))
    assert any(e.startswith("chain_hash sha256:ab2745") and "does not match the proof" in e for e in errors)


# --- paths that leave the capsule -------------------------------------------------------


def test_ref_climbing_out_is_refused(minimal: Path) -> None:
    _edit_manifest(minimal, environment_ref="../../etc/passwd", lineage_ref="../../etc/passwd")
    with pytest.raises(CapsuleError, match="environment_ref"):
        _read(minimal)  # the schema pins it to env.lock; the path check stands behind it
    errors = _errors(novafabric.verify(minimal, []))
    assert "lineage_ref: '../../etc/passwd' climbs out with '..'" in errors
    assert "environment_ref: '../../etc/passwd' climbs out with '..'" in errors


def test_absolute_artifact_path_is_invalid(minimal: Path) -> None:
    artifact = {"name": "x", "path": "/etc/passwd", "content_hash": "sha256:" + "0" * 64,
                "size_bytes": 1, "media_type": "text/plain"}
    _edit_manifest(minimal, inputs=[artifact])
    with pytest.raises(CapsuleError, match=r"inputs\[0\].path: '/etc/passwd' is an absolute path"):
        _read(minimal)
    assert "artifact 'x': '/etc/passwd' is an absolute path" in _errors(novafabric.verify(minimal, []))


def test_symlink_escaping_the_capsule(tmp_path: Path, minimal: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("private")
    (minimal / "outputs" / "stdout.txt").unlink()
    (minimal / "outputs" / "stdout.txt").symlink_to(secret)
    with pytest.raises(CapsuleError, match="resolves outside the capsule"):
        _read(minimal)
    assert "symlink outputs/stdout.txt leads outside the capsule" in _errors(novafabric.verify(minimal, []))


def test_env_lock_symlinked_outside_is_refused_by_read(tmp_path: Path, minimal: Path) -> None:
    outside = tmp_path / "env.lock"
    shutil.copy(minimal / "env.lock", outside)
    (minimal / "env.lock").unlink()
    (minimal / "env.lock").symlink_to(outside)
    with pytest.raises(CapsuleError, match="environment_ref: 'env.lock' resolves outside the capsule"):
        _read(minimal)
    assert "environment_ref: 'env.lock' resolves outside the capsule (through a symlink)" in _errors(
        novafabric.verify(minimal, [])
    )


def test_symlink_inside_the_capsule_off_the_read_paths_is_fine(minimal: Path) -> None:
    (minimal / "notes.txt").symlink_to("outputs/stdout.txt")
    assert novafabric.verify(minimal, []).valid
    _read(minimal)


def test_symlink_on_a_read_path_is_refused_even_inside(minimal: Path) -> None:
    """verify's walk follows no link, so replay reads through none: one view of the tree."""
    (minimal / "outputs" / "copy.txt").symlink_to("stdout.txt")
    assert "outputs/copy.txt is a symlink, and replay reads no file through one (the seal binds paths, a link " \
           "changes what they mean)" in _errors(novafabric.verify(minimal, []))


# --- untrusted YAML ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary data, not YAML text"),
        (b"\xff\xfe\xfdgarbage", "not UTF-8 text"),
        (b"- a\n- b\n", "expected a YAML mapping, found a list"),
        (b"schema_version: 0.1.0\nrun_id: [unclosed\n", "not valid YAML"),
        (b"schema_version: 0.1.0\nschema_version: 0.1.0\nrun_id: x\n", "appears more than once"),
        (b"schema_version: 0.1.0\nrun_id: !!binary aGVsbG8=\n", "bytes is not a plain value"),
        (b"schema_version: 0.1.0\nrun_id: !!python/object:os.system x\n", "not valid YAML"),
        (b"x: " + b"[" * 200 + b"]" * 200 + b"\n", "nested more than"),
    ],
)
def test_bad_capsule_yaml_is_one_clear_line(tmp_path: Path, content: bytes, problem: str) -> None:
    (tmp_path / "capsule.yaml").write_bytes(content)
    with pytest.raises(CapsuleError) as info:
        novafabric.detect(tmp_path)
    assert info.value.path == str(tmp_path / "capsule.yaml")
    assert problem in info.value.problem
    assert "\n" not in info.value.line()


@pytest.mark.timeout(10)
def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    (tmp_path / "capsule.yaml").write_text("schema_version: 0.1.0\nrun_id: x\n" + "\n".join(lines) + "\n")
    started = time.monotonic()
    with pytest.raises(CapsuleError, match=r"YAML alias \*a0 refused"):
        novafabric.detect(tmp_path)
    assert time.monotonic() - started < 2


def test_oversized_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlload, "MAX_BYTES", 100)
    (tmp_path / "capsule.yaml").write_text("schema_version: 0.1.0\nrun_id: x\nnote: " + "y" * 200 + "\n")
    with pytest.raises(CapsuleError, match="over the 100 byte limit"):
        novafabric.detect(tmp_path)


def test_node_flood_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlload, "MAX_NODES", 50)
    (tmp_path / "capsule.yaml").write_text("schema_version: 0.1.0\nrun_id: x\nl: [" + ", ".join(["1"] * 60) + "]\n")
    with pytest.raises(CapsuleError, match="more than 50 nodes"):
        novafabric.detect(tmp_path)


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("at: 2026-05-08T00:02:46Z\n")
    assert yamlload.load_yaml_mapping(tmp_path / "c.yaml") == {"at": "2026-05-08T00:02:46Z"}


# --- distributed runs ----------------------------------------------------------------------

GLOBAL = "01JC5000000000000000000000"
PARENT = "01JC5000000000000000000001"


def _distributed(spool: Path, run_id: str, role: str, **extra: object) -> Path:
    doc = {"schema_version": "0.2.0", "capsule_role": role, "global_run_id": GLOBAL, "run_id": run_id,
           "status": "COMPLETE", "created_at": "2026-10-14T09:00:00Z", **extra}
    folder = spool / run_id
    folder.mkdir(parents=True)
    (folder / "capsule.json").write_text(json.dumps(doc, indent=2))
    return folder


def test_distributed_parent_lists_the_workers_it_holds(tmp_path: Path) -> None:
    parent = _distributed(tmp_path, PARENT, "PARENT", children_expected=2, children_arrived=2, distribution_role="DRIVER")
    _distributed(parent, "01JC5000000000000000000003", "CHILD", parent_run_id=PARENT, rank=1, distribution_role="WORKER")
    _distributed(parent, "01JC5000000000000000000002", "CHILD", parent_run_id=PARENT, rank=0,
                 distribution_role="WORKER", status="FAILED")
    _distributed(parent, "01JC5000000000000000000009", "CHILD", parent_run_id="01JC5000000000000000000008", rank=0)
    capsule = _read(parent)
    assert capsule.provenance.global_run_id == GLOBAL
    assert capsule.provenance.capsule_id == PARENT
    assert [(w.run_id[-1], w.rank, w.role, w.distribution_role, w.status) for w in capsule.provenance.workers] == [
        ("2", 0, "CHILD", "WORKER", "FAILED"),
        ("3", 1, "CHILD", "WORKER", "COMPLETE"),
    ]
    assert capsule.command.argv == () and capsule.command.outcome == "pass"
    assert _read(parent / "capsule.json").provenance.capsule_id == PARENT
    result = novafabric.verify(parent, [])
    assert result.valid, _errors(result)
    assert any(p.message == "2 worker capsules found inside the parent" for p in result.problems)


def test_a_distributed_parent_never_reads_its_siblings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NovaFabric's spool puts a run's capsules side by side: inspecting the parent reads none of them."""
    parent = _distributed(tmp_path, PARENT, "PARENT", children_expected=1, children_arrived=1)
    _distributed(tmp_path, "01JC5000000000000000000003", "CHILD", parent_run_id=PARENT, rank=0)
    opened: list[str] = []
    real_open = Path.open

    def spy(self: Path, *args: object, **kwargs: object) -> object:
        opened.append(str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", spy)
    assert _read(parent).provenance.workers == ()
    result = novafabric.verify(parent, [])
    assert result.valid and not _warnings(result)
    assert any("no worker capsules inside the parent" in p.message for p in result.problems)
    assert opened and all(p.startswith(str(parent)) for p in opened), opened


def test_a_worker_linked_into_the_parent_is_not_read(tmp_path: Path) -> None:
    parent = _distributed(tmp_path / "spool", PARENT, "PARENT")
    sibling = _distributed(tmp_path / "spool", "01JC5000000000000000000003", "CHILD", parent_run_id=PARENT, rank=0)
    (parent / "w0").symlink_to(sibling, target_is_directory=True)
    assert _read(parent).provenance.workers == ()


def test_distributed_capsule_schema_violation(tmp_path: Path) -> None:
    parent = _distributed(tmp_path, PARENT, "PARENT", status="EXPLODED", children_arrived=3)
    _distributed(parent, "01JC5000000000000000000003", "CHILD", parent_run_id=PARENT, rank=0)
    with pytest.raises(CapsuleError, match="status"):
        _read(parent)
    result = novafabric.verify(parent, [])
    assert any(e.startswith("status:") for e in _errors(result))
    assert "children_arrived is 3, 1 found" in _warnings(result)


def test_capsule_json_of_another_kind_is_not_claimed(tmp_path: Path) -> None:
    (tmp_path / "capsule.json").write_text('{"twin": 1}')
    assert novafabric.detect(tmp_path / "capsule.json") is None
    with pytest.raises(CapsuleError, match="directory has no capsule.yaml"):
        novafabric.detect(tmp_path)
