"""verify and replay agree on every size limit (issue 39 #10): a capsule over any of the caps
(runner/capsules/limits.py, the readers' file caps) that replay refuses (exit 2) is never valid
for `replay verify`, sealed or not. Each cap has its case, made just over it."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import ec

from runner.capsules import jsonload, limits
from runner.capsules.novafabric_model import MAX_OUTPUT_BYTES
from runner.cli.main import main
from runner.build.sources.content import MAX_FILE
from runner.capsules.yamlload import MAX_BYTES as YAML_BYTES
from runner.errors import CapsuleError
from tests.envelope import result_of
from tests.examples import CI, TWIN
from tests.support.seals import SEALED, reseal

_DICTS = {"env", "runtimes", "tools", "scrubbed", "node", "python"}


def _over(rule: limits.Rule, existing: Any) -> Any:
    """A value just over the rule's cap, of the member's own kind."""
    pattern, cap, _, size = rule
    if size is limits._argv_chars:
        return ["x" * limits.ARG_CHARS] * (cap // limits.ARG_CHARS + 1)
    if size is limits._count:
        if isinstance(existing, dict) or (existing is None and pattern[-1] in _DICTS):
            return {f"K{i}": "x" for i in range(cap + 1)}
        return ["x"] * (cap + 1)
    return "x" * (cap + 1)


def _put(doc: Any, pattern: tuple[str, ...], make: Any) -> None:
    """Set the member the pattern names (its first match; missing steps made) to make(existing)."""
    node = doc
    for i, step in enumerate(pattern):
        last = i == len(pattern) - 1
        if isinstance(node, list):
            if not node:
                node.append({})
            key: Any = 0
        else:
            key = next(iter(node), "k") if step == "*" else step
        existing = node[key] if (isinstance(node, list) or key in node) else None
        if last:
            node[key] = make(existing)
        else:
            if not isinstance(existing, (dict, list)):
                existing = {}
                node[key] = existing
            node = existing


def _case(tmp_path: Path, source: Path, rules: tuple[limits.Rule, ...], long: frozenset[tuple[str, ...]],
          rule: limits.Rule) -> Path:
    doc = json.loads(source.read_text())
    _put(doc, rule[0], lambda existing: _over(rule, existing))
    path = tmp_path / "over.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CapsuleError):  # the case is over this cap (not refused for something else)
        limits.check(path, json.loads(path.read_text()), (rule,), long)
    return path


def _agree(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    """replay refuses it (exit 2, one line); verify does not call it valid. replay's line."""
    assert main(["render", str(path)]) == 2
    refused = capsys.readouterr().err.strip().splitlines()
    assert len(refused) == 1 and ("limit" in refused[0] or "larger than" in refused[0]), refused
    code = main(["verify", str(path), "--json"])
    out = capsys.readouterr().out
    if code == 1:  # answered INVALID: the same problem as an error
        assert result_of(out)["valid"] is False
    else:
        assert code == 2, out  # refused outright, as replay does
    return refused[0]


def _name(rule: limits.Rule) -> str:
    return ".".join(rule[0]) + f":{rule[2]}"


@pytest.mark.parametrize("rule", limits.TWIN_RULES, ids=_name)
def test_a_twin_capsule_over_a_cap_is_refused_by_both(rule: limits.Rule, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _agree(capsys, _case(tmp_path, TWIN, limits.TWIN_RULES, limits.TWIN_LONG, rule))


@pytest.mark.parametrize("rule", limits.CODEINSTANCES_RULES, ids=_name)
def test_a_codeinstances_capsule_over_a_cap_is_refused_by_both(rule: limits.Rule, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    _agree(capsys, _case(tmp_path, CI, limits.CODEINSTANCES_RULES, limits.CODEINSTANCES_LONG, rule))


def test_any_other_string_and_member_name_over_the_string_cap_is_refused_by_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for change in (lambda d: d["command"].__setitem__("cwd", "x" * (limits.STRING_CHARS + 1)),
                   lambda d: d["tools"].__setitem__("t" * (limits.STRING_CHARS + 1), "1")):
        doc = json.loads(TWIN.read_text())
        change(doc)
        (tmp_path / "over.json").write_text(json.dumps(doc))
        _agree(capsys, tmp_path / "over.json")


@pytest.mark.parametrize("pad", [[{}] * (jsonload.MAX_CONTAINERS + 1), [0] * (jsonload.MAX_VALUES + 1),
                                 "x" * jsonload.MAX_BYTES], ids=["objects", "values", "bytes"])
def test_a_json_capsule_over_the_readers_caps_is_refused_by_both(pad: Any, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(TWIN.read_text())
    doc["pad"] = pad
    (tmp_path / "over.json").write_text(json.dumps(doc))
    _agree(capsys, tmp_path / "over.json")


def _sealed_with(tmp_path: Path, rel: str, size: int, input_name: str | None = None) -> Path:
    """The sealed example with `rel` of `size` bytes (sparse), its digest listed (and the input
    `input_name`'s hash and size, when it is one), sealed afresh."""
    root = tmp_path / "capsule"
    shutil.copytree(SEALED, root)
    big = root / rel
    big.parent.mkdir(parents=True, exist_ok=True)
    with big.open("wb") as f:
        f.truncate(size)
    digest = hashlib.sha256()
    with big.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    manifest = yaml.safe_load((root / "capsule.yaml").read_text())
    manifest["evidence_digests"][rel] = {"sha256": f"sha256:{digest.hexdigest()}", "size_bytes": size}
    for item in manifest["inputs"]:
        if item["name"] == input_name:
            item.update(content_hash=f"sha256:{digest.hexdigest()}", size_bytes=size)
    (root / "capsule.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    reseal(root, ec.generate_private_key(ec.SECP256R1()))
    return root


@pytest.mark.parametrize("rel", ["env.lock", "replay.yaml"])
def test_a_sealed_novafabric_yaml_file_over_16_mib_is_refused_by_both(rel: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert rel in _agree(capsys, _sealed_with(tmp_path, rel, YAML_BYTES + 1))


@pytest.mark.parametrize("rel", ["outputs/stdout.txt", "outputs/stderr.txt"])
def test_a_sealed_novafabric_output_over_64_mib_is_invalid_for_verify(rel: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = _sealed_with(tmp_path, rel, MAX_OUTPUT_BYTES + 1)
    said = _agree(capsys, root)
    assert rel in said and "64 MiB" in said
    assert main(["verify", str(root), "--json"]) == 1
    result = result_of(capsys.readouterr().out)
    (error,) = [p for p in result["problems"] if p["severity"] == "error"]
    assert error["where"] == rel and "64 MiB" in error["message"] and "replay refuses it" in error["message"]
    assert result["sealed"] is True and result["signers"][0]["signature_valid"] is True  # the seal itself is fine


def test_a_sealed_novafabric_input_over_64_mib_is_invalid_for_verify(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An input replay would copy into the build (the content store takes at most 64 MiB a file)."""
    root = _sealed_with(tmp_path, "inputs/poem.txt", MAX_FILE + 1, input_name="poem")
    said = _agree(capsys, root)
    assert "poem.txt" in said and "larger than 64 MiB" in said
    assert main(["verify", str(root), "--json"]) == 1
    result = result_of(capsys.readouterr().out)
    (error,) = [p for p in result["problems"] if p["severity"] == "error"]
    assert "larger than 64 MiB" in error["message"] and "replay refuses it before building" in error["message"]


def test_the_sealed_example_within_the_caps_stays_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _sealed_with(tmp_path, "outputs/stdout.txt", MAX_OUTPUT_BYTES)
    assert main(["verify", str(root), "--json"]) == 0
    assert result_of(capsys.readouterr().out)["valid"] is True
