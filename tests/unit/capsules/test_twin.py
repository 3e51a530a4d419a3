from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.capsules import read_capsule, twin, verify_capsule
from runner.capsules.model import EnvFact, Failure, Format, PackageManager, Platform, Repo
from runner.errors import CapsuleError, UnsupportedVersion

from tests.unit.capsules import EXAMPLES, case_dirs, check_case

NEW_YORK = EXAMPLES / "twin" / "echarts-new-york.json"


def variant(tmp_path: Path, change: Any) -> Path:
    doc = json.loads(NEW_YORK.read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / "capsule.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_reads_the_command_and_its_failure() -> None:
    cmd = twin.read(NEW_YORK).command
    assert cmd.argv[:2] == ("npx", "jest") and cmd.argv[-1] == "test/ut/spec/util/time.test.ts"
    assert (cmd.cwd, cmd.cwd_is_host_path) == (".", False)
    assert (cmd.exit_code, cmd.signal, cmd.outcome, cmd.duration_ms) == (1, None, "fail", 795.0)
    assert isinstance(cmd.failure, Failure)
    assert cmd.failure.signature == "exit1:0aee0834ac9c4d2d"
    assert cmd.failure.key_lines[1] == "✕ roundTime_locale" and len(cmd.failure.key_lines) == 7
    assert cmd.failure.output_tail is not None and cmd.failure.output_tail.endswith("Time:        <duration>")


def test_reads_the_environment_facts() -> None:
    c = twin.read(NEW_YORK)
    assert c.provenance.format is Format.TWIN and c.provenance.format_version == "1"
    assert (c.provenance.generator, c.provenance.created_at) == ("twin 0.1.0", "2026-09-27T20:25:46.262Z")
    assert c.provenance.path == str(NEW_YORK)
    assert c.platform == Platform(os="linux", arch="x64", release="7.1.8-arch1-3", distro="garuda",
                                  distro_version=None, libc="glibc", libc_version="2.44")
    assert c.runtimes["node"] == "22.23.3" and len(c.runtimes) == 8
    assert c.tools["docker"] == "29.7.2" and "uv" not in c.tools
    assert c.package_managers == (PackageManager(
        name="npm", ecosystem="node", version="10.9.9", declared=None, lockfile="package-lock.json",
        lockfile_sha256="93494698b0bb4b27f9a6c7e64d2ee495df56ef3027e36eaaeb6887ae259b5868"),)
    assert c.resolved.node["@babel/code-frame"] == ("7.10.4", "7.26.2") and len(c.resolved.python) == 0
    assert c.repo == Repo(remote="https://github.com/apache/echarts", commit="984bf46b2f905dd0ad909a2d5e6e9d66a1b6568c",
                          branch="master", dirty=False, diff="", untracked=())
    assert (c.locale.time_zone, c.locale.locale) == ("America/New_York", "en-US")
    assert c.redaction is not None and c.redaction.values_included == ("LANG", "TZ")
    assert (c.redaction.rules_version, c.redaction.hashed_values, len(c.redaction.scrubbed)) == (1, False, 0)
    assert c.failed


def test_env_facts_and_host_specific_variables() -> None:
    env = twin.read(NEW_YORK).env
    assert len(env) == 23
    assert env["TZ"] == EnvFact(name="TZ", state="set", value="America/New_York")
    assert env["CI"] == EnvFact(name="CI", state="absent")
    assert env["PATH"] == EnvFact(name="PATH", state="set", host_specific=True)
    assert [name for name, fact in env.items() if fact.host_specific] == ["PATH"]


def test_model_holds_plain_values() -> None:
    c = twin.read(NEW_YORK)
    assert type(c.command.exit_code) is int and type(c.redaction.rules_version) is int  # type: ignore[union-attr]
    assert hash(c)  # frozen all the way down


def test_detect() -> None:
    assert twin.detect(NEW_YORK) is not None
    assert twin.detect(EXAMPLES / "codeinstances" / "fetch-greeting.json") is None
    assert twin.detect(EXAMPLES / "novafabric" / "minimal-run") is None


def test_detect_needs_an_integer_twin_member(tmp_path: Path) -> None:
    def stringly(doc: dict[str, Any]) -> None:
        doc["twin"] = "1"

    assert twin.detect(variant(tmp_path, stringly)) is None


def test_the_real_capsule_verifies_clean() -> None:
    result = twin.verify(NEW_YORK, ())
    assert result.valid and result.problems == ()
    assert result.format == "twin" and "consistency" in result.checks


@pytest.mark.parametrize("case", case_dirs("twin"), ids=lambda p: p.name)
def test_case(case: Path) -> None:
    check_case(twin, case)


def test_newer_version_names_both_versions(tmp_path: Path) -> None:
    path = variant(tmp_path, lambda d: d.update(twin=7))
    with pytest.raises(UnsupportedVersion) as info:
        twin.read(path)
    assert info.value.line() == f"{path}: twin format v7 is newer than this replay understands (v1); upgrade replay"


def test_version_zero_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(CapsuleError, match="unknown format version 0"):
        twin.read(variant(tmp_path, lambda d: d.update(twin=0)))


def test_verify_lists_every_problem_not_just_the_first(tmp_path: Path) -> None:
    def break_three(doc: dict[str, Any]) -> None:
        doc["command"]["durationMs"] = "fast"
        doc["repo"]["dirty"] = "no"
        doc["locale"] = []

    result = twin.verify(variant(tmp_path, break_three), ())
    assert [(p.where, p.message) for p in result.problems] == [
        ("command.durationMs", 'expected a number, got "fast"'),
        ("repo.dirty", 'expected true or false, got "no"'),
        ("locale", "expected an object, got a list"),
    ]


def test_signature_not_matching_key_lines_is_a_warning(tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["command"]["failure"]["keyLines"][0] = "FAIL somewhere else"

    result = twin.verify(variant(tmp_path, edit), ())
    assert result.valid
    assert [(p.severity, p.where) for p in result.problems] == [("warning", "command.failure.signature")]


def test_missing_failure_on_a_failed_run(tmp_path: Path) -> None:
    result = twin.verify(variant(tmp_path, lambda d: d["command"].pop("failure")), ())
    assert not result.valid
    assert [p.message for p in result.problems] == ['missing although outcome is "fail"']


def test_uppercase_lockfile_hash_is_normalised(tmp_path: Path) -> None:
    def upper(doc: dict[str, Any]) -> None:
        pm = doc["packageManagers"][0]
        pm["lockfileSha256"] = pm["lockfileSha256"].upper()

    assert twin.read(variant(tmp_path, upper)).package_managers[0].lockfile_sha256 == "93494698b0bb4b27f9a6c7e64d2ee495df56ef3027e36eaaeb6887ae259b5868"


def test_salted_hash_shape(tmp_path: Path) -> None:
    def hashed(doc: dict[str, Any]) -> None:
        doc["env"]["LANG"]["hash"] = "abc"

    result = twin.verify(variant(tmp_path, hashed), ())
    assert [(p.where, p.message) for p in result.problems] == [("env.LANG.hash", "expected 32 hex characters")]


# --- through read_capsule: the right reader, and CapsuleError naming the file -----------


def test_read_capsule_picks_twin() -> None:
    assert read_capsule(NEW_YORK).provenance.format is Format.TWIN
    assert verify_capsule(NEW_YORK).format == "twin"


def test_read_capsule_deeply_nested(tmp_path: Path) -> None:
    path = tmp_path / "capsule.json"
    path.write_text('{"twin": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(CapsuleError) as info:
        read_capsule(path)
    assert info.value.line() == f"{path}: JSON nested more than 200 levels deep"


@pytest.mark.parametrize(("content", "problem"), [
    (b"", "empty file"),
    (b'{"twin": 1, "command": {"argv": [', "not valid JSON: Expecting value at line 1 column 34 (the file ends early; truncated?)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "binary data, not JSON text (NUL byte at offset 8)"),
])
def test_read_capsule_bad_json_file(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "capsule.json"
    path.write_bytes(content)
    with pytest.raises(CapsuleError) as info:
        read_capsule(path)
    assert info.value.line() == f"{path}: {problem}"


def test_read_capsule_garbage_without_a_json_name(tmp_path: Path) -> None:
    path = tmp_path / "capsule.bin"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(CapsuleError) as info:
        read_capsule(path)
    assert info.value.line().startswith(f"{path}: not a capsule of any known format (tried twin, codeinstances")
