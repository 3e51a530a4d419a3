from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.capsules import codeinstances, read_capsule, verify_capsule
from runner.capsules.jsonload import load
from runner.capsules.model import Body, Format, HttpError, RecordedValue
from runner.errors import CapsuleError

from tests.unit.capsules import CASES, EXAMPLES, case_dirs, check_case

GREETING = EXAMPLES / "codeinstances" / "fetch-greeting.json"
GREETING_ID = "sha256:1823a60bfd5b5ae10f4039126a4097e2bc0202565dc425a0c718ac6d67100c33"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "capsule.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_command_and_result() -> None:
    c = codeinstances.read(GREETING)
    assert c.command.argv[:2] == ("python3", "-c") and "urlopen" in c.command.argv[2]
    assert (c.command.cwd, c.command.cwd_is_host_path, c.working_directory) == ("/home/sam", True, "/home/sam")
    assert (c.command.exit_code, c.command.signal, c.command.outcome) == (0, None, "pass")
    assert c.command.duration_ms == 212.4
    assert (c.command.stdout, c.command.stderr) == (Body(text="hello\n"), Body(text=""))
    assert not c.failed


def test_reads_calls_values_and_provenance() -> None:
    c = codeinstances.read(GREETING)
    (call,) = c.http_calls
    assert (call.seq, call.at_ms, call.error) == (1, 61.8, None)
    assert (call.request.method, call.request.url, call.request.body) == ("GET", "https://api.example.com/v1/greeting", None)
    assert call.request.headers[2] == ("User-Agent", "Python-urllib/3.11")
    assert call.response is not None and (call.response.status, call.response.reason) == (200, "OK")
    assert call.response.headers[1] == ("Content-Length", "42")
    assert call.response.body is not None and json.loads(call.response.body.data)["served_by"] == "api-7"
    assert c.values == (RecordedValue(seq=1, kind="clock", value="2026-10-13T08:00:00.000000000Z"),)
    p = c.provenance
    assert (p.format, p.format_version, p.capsule_id) == (Format.CODEINSTANCES, "0", GREETING_ID)
    assert p.created_at == "2026-10-13T08:00:00.000000000Z"
    assert hash(c)


def test_the_real_id_verifies() -> None:
    assert codeinstances.compute_id(load(GREETING)) == GREETING_ID
    result = codeinstances.verify(GREETING, ())
    assert result.valid and result.problems == () and "id" in result.checks


@pytest.mark.parametrize("case", case_dirs("codeinstances"), ids=lambda p: p.name)
def test_case(case: Path) -> None:
    check_case(codeinstances, case)


def test_tampered_value_names_both_ids() -> None:
    result = codeinstances.verify(CASES / "codeinstances" / "tampered" / "capsule.json", ())
    (problem,) = result.problems
    computed = codeinstances.compute_id(load(CASES / "codeinstances" / "tampered" / "capsule.json"))
    assert computed != GREETING_ID
    assert (problem.where, problem.message) == ("id", f"does not match the content: recorded {GREETING_ID}, computed {computed}")


def test_read_does_not_check_the_id() -> None:
    c = codeinstances.read(CASES / "codeinstances" / "tampered" / "capsule.json")
    assert c.command.stdout == Body(text="goodbye\n") and c.provenance.capsule_id == GREETING_ID


def test_reformatting_keeps_the_id(tmp_path: Path) -> None:
    doc = load(GREETING)
    shuffled = {"format": doc["format"], **dict(reversed([(k, v) for k, v in doc.items() if k != "format"]))}
    path = write(tmp_path, json.dumps(shuffled, indent=7))
    assert codeinstances.verify(path, ()).valid


def test_number_literal_is_part_of_the_id(tmp_path: Path) -> None:
    text = GREETING.read_text(encoding="utf-8").replace('"durationMs": 212.4,', '"durationMs": 212.40,')
    path = write(tmp_path, text)
    assert codeinstances.read(path).command.duration_ms == 212.4
    assert codeinstances.compute_id(load(path)) != GREETING_ID
    assert not codeinstances.verify(path, ()).valid


def test_errors_binary_bodies_and_random_values() -> None:
    c = codeinstances.read(CASES / "codeinstances" / "errors-and-binary" / "capsule.json")
    assert (c.command.exit_code, c.command.signal, c.command.outcome) == (None, "SIGTERM", "fail")
    assert c.command.stdout is None and c.command.stderr is not None and c.command.stderr.data == b"\xff"
    first, second = c.http_calls
    assert (first.response, first.error) == (None, HttpError(kind="connect-refused", message="dial tcp 10.0.0.7:443: connect: connection refused"))
    assert second.request.headers == (("Authorization", "[redacted]"), ("X-Tag", "a"), ("X-Tag", "b"))
    assert second.request.body is not None and second.request.body.data == b"\x00\x01\x02\x03"
    assert second.response is not None and (second.response.status, second.response.body) == (503, None)
    assert c.values[1] == RecordedValue(seq=2, kind="random", value="q83vEjRWeJA=")


@pytest.mark.parametrize("kind", codeinstances.ERROR_KINDS)
def test_every_documented_error_kind_reads(tmp_path: Path, kind: str) -> None:
    doc = load(GREETING)
    call = doc["calls"][0]
    del call["response"]
    call["error"] = {"kind": kind, "message": "x"}
    (read,) = codeinstances.read(write(tmp_path, json.dumps(doc))).http_calls
    assert read.error == HttpError(kind=kind, message="x")  # type: ignore[arg-type]


def test_response_and_error_together_is_refused(tmp_path: Path) -> None:
    doc = load(GREETING)
    doc["calls"][0]["error"] = {"kind": "reset", "message": "x"}
    with pytest.raises(CapsuleError, match='calls\\[0\\]: expected exactly one of "response" and "error"'):
        codeinstances.read(write(tmp_path, json.dumps(doc)))


def test_format_must_be_the_first_member(tmp_path: Path) -> None:
    doc = load(GREETING)
    path = write(tmp_path, json.dumps({"id": doc["id"], **{k: v for k, v in doc.items() if k != "id"}}))
    assert codeinstances.detect(path) is None
    with pytest.raises(CapsuleError, match='first member must be "format": "codeinstances/0"'):
        codeinstances.read(path)


def test_unknown_members_are_ignored_but_hashed(tmp_path: Path) -> None:
    doc = load(GREETING)
    doc["signature"] = {"by": "someone"}
    path = write(tmp_path, json.dumps(doc))
    assert codeinstances.read(path).provenance.capsule_id == GREETING_ID
    assert not codeinstances.verify(path, ()).valid  # adding anything changes the id


def test_bad_base64_body(tmp_path: Path) -> None:
    doc = load(GREETING)
    doc["result"]["stdout"] = {"base64": "not base64!"}
    with pytest.raises(CapsuleError, match="result.stdout.base64: not valid base64"):
        codeinstances.read(write(tmp_path, json.dumps(doc)))


# --- through read_capsule -------------------------------------------------------------


def test_read_capsule_picks_codeinstances() -> None:
    assert read_capsule(GREETING).provenance.format is Format.CODEINSTANCES
    assert verify_capsule(GREETING).valid


def test_read_capsule_refusals_name_the_file() -> None:
    path = CASES / "codeinstances" / "case-variant-top" / "capsule.json"
    with pytest.raises(CapsuleError) as info:
        read_capsule(path)
    assert info.value.line() == f"{path}: Calls: the member 'calls' spelled in another case"


def test_verify_capsule_reports_a_tampered_file() -> None:
    result = verify_capsule(CASES / "codeinstances" / "tampered" / "capsule.json")
    assert not result.valid and result.format == "codeinstances"
