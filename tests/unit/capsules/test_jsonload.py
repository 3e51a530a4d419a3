from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from runner.capsules.jsonload import (
    MAX_BYTES, MAX_DEPTH, STRING, STRINGS, JsonFloat, JsonInt, Shape, canonical, load, member_path, sniff,
)
from runner.errors import CapsuleError

from tests.unit.capsules import EXAMPLES

GREETING = EXAMPLES / "codeinstances" / "fetch-greeting.json"


def write(tmp_path: Path, content: str | bytes, name: str = "capsule.json") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def error_of(path: Path, **kwargs: int) -> str:
    with pytest.raises(CapsuleError) as info:
        load(path, **kwargs)
    line = info.value.line()
    assert line.startswith(f"{path}: ") and "\n" not in line
    return line.removeprefix(f"{path}: ")


# --- loading ---------------------------------------------------------------------


def test_numbers_keep_their_literal_text(tmp_path: Path) -> None:
    doc = load(write(tmp_path, '{"a": 212.40, "b": -0, "c": 1E+2, "d": 10}'))
    assert isinstance(doc["a"], JsonFloat) and doc["a"] == 212.4 and doc["a"].literal == "212.40"
    assert isinstance(doc["b"], JsonInt) and doc["b"] == 0 and doc["b"].literal == "-0"
    assert doc["c"] == 100.0 and doc["c"].literal == "1E+2"
    assert isinstance(doc["d"], JsonInt) and doc["d"].literal == "10"


def test_members_keep_file_order() -> None:
    assert list(load(GREETING)) == ["format", "id", "command", "result", "calls", "values"]


def test_truncated_file(tmp_path: Path) -> None:
    text = GREETING.read_text()
    assert "the file ends early" in error_of(write(tmp_path, text[: len(text) // 3]))


def test_not_json(tmp_path: Path) -> None:
    problem = error_of(write(tmp_path, '{\n "a": 1,\n "b": 2\n "c": 3}'))
    assert problem == "not valid JSON: Expecting ',' delimiter at line 4 column 2"


def test_binary_garbage(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, bytes(range(256)) * 4)) == "binary data, not JSON text (NUL byte at offset 0)"


def test_not_utf8(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, b'{"a": "caf\xe9"}')) == "not UTF-8 text: invalid byte 0xe9 at offset 10"


def test_utf16(tmp_path: Path) -> None:
    assert "UTF-16" in error_of(write(tmp_path, '{"a": 1}'.encode("utf-16")))


def test_utf8_bom_is_ignored(tmp_path: Path) -> None:
    assert load(write(tmp_path, b'\xef\xbb\xbf{"a": 1}')) == {"a": 1}


@pytest.mark.parametrize("content", ["", "  \n\t "])
def test_empty_file(tmp_path: Path, content: str) -> None:
    assert error_of(write(tmp_path, content)) == "empty file"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants(tmp_path: Path, constant: str) -> None:
    assert error_of(write(tmp_path, f'{{"a": {constant}}}')) == f"not valid JSON: {constant} is not a JSON number"


def test_huge_integer_literal(tmp_path: Path) -> None:
    assert "an integer of 5000 digits is too long" in error_of(write(tmp_path, '{"a": ' + "9" * 5000 + "}"))


def test_file_over_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("w") as f:  # a real, valid document just over the limit
        f.write('{"pad": "')
        f.write("x" * (MAX_BYTES - 10))
        f.write('"}')
    assert path.stat().st_size == MAX_BYTES + 1
    assert error_of(path) == f"file is {MAX_BYTES + 1} bytes, over the {MAX_BYTES // 2**20} MiB limit"


def test_cap_is_a_parameter(tmp_path: Path) -> None:
    path = write(tmp_path, '{"a": "0123456789"}')
    assert error_of(path, max_bytes=10) == "file is 19 bytes, over the 10 byte limit"
    assert load(path, max_bytes=19) == {"a": "0123456789"}


@pytest.mark.parametrize("levels", [100_001, 1_000_000])
def test_deep_nesting_is_refused_quickly(tmp_path: Path, levels: int) -> None:
    path = write(tmp_path, '{"a": ' + "[" * levels + "]" * levels + "}")
    started = time.monotonic()
    assert error_of(path) == f"JSON nested more than {MAX_DEPTH} levels deep"
    assert time.monotonic() - started < 5


def test_deep_objects_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, '{"a":' * 100_001 + "1" + "}" * 100_001)
    assert error_of(path) == f"JSON nested more than {MAX_DEPTH} levels deep"


def test_depth_limit_is_exact(tmp_path: Path) -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load(write(tmp_path, at_limit, "ok.json")) == json.loads(at_limit)
    assert "nested" in error_of(write(tmp_path, "[" + at_limit + "]", "deep.json"))


def test_brackets_inside_strings_do_not_count(tmp_path: Path) -> None:
    text = json.dumps({"a": "[" * 1000 + '\\"{' * 500})
    assert load(write(tmp_path, text)) == json.loads(text)


def test_duplicate_member_is_named_with_its_path(tmp_path: Path) -> None:
    path = write(tmp_path, '{"calls": [{"seq": 1, "request": {"url": "a", "url": "b"}}]}')
    assert error_of(path) == 'calls[0].request: member "url" appears more than once'


def test_duplicate_top_level_member(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, '{"twin": 1, "twin": 2}')) == 'top level: member "twin" appears more than once'


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    assert error_of(tmp_path) == "not a regular file"


# --- sniffing: which files a JSON reader should try ---------------------------------


def test_sniff_leaves_other_files_alone(tmp_path: Path) -> None:
    assert sniff(tmp_path) is None
    assert sniff(write(tmp_path, "run_id: x\n", "capsule.yaml")) is None
    assert sniff(write(tmp_path, "hello\n", "notes")) is None
    assert sniff(write(tmp_path, bytes(range(1, 200)), "blob.bin")) is None


def test_sniff_parses_json_by_name_or_content(tmp_path: Path) -> None:
    assert sniff(write(tmp_path, '  {"a": [1]}', "capsule")) == {"a": [1]}
    with pytest.raises(CapsuleError, match="not valid JSON"):
        sniff(write(tmp_path, "hello", "capsule.json"))


# --- canonical form ----------------------------------------------------------------


def test_canonical_form_reproduces_the_real_id() -> None:
    doc = load(GREETING)
    digest = hashlib.sha256(canonical({k: v for k, v in doc.items() if k != "id"})).hexdigest()
    assert "sha256:" + digest == doc["id"]


def test_canonical_numbers_are_as_written(tmp_path: Path) -> None:
    doc = load(write(tmp_path, '{"d": 10, "c": 1E+2, "b": -0, "a": 212.40, "e": [1.0, 0.5e-3]}'))
    assert canonical(doc) == b'{"a":212.40,"b":-0,"c":1E+2,"d":10,"e":[1.0,0.5e-3]}'


def test_canonical_sorts_by_code_point() -> None:
    # UTF-16 order would put U+1F600 before U+FFFF; code point order puts it last.
    doc = {"b": 1, "a": 2, "B": 3, "é": 4, "\U0001F600": 5, "\uffff": 6}
    assert canonical(doc) == '{"B":3,"a":2,"b":1,"é":4,"\uffff":6,"\U0001F600":5}'.encode()


def test_canonical_escapes_minimally() -> None:
    text = '"\\/\b\t\n\f\r\x00\x01\x1f\x7f é 😀 \u2028'
    expected = '"\\"\\\\/\\b\\t\\n\\f\\r\\u0000\\u0001\\u001f\x7f é 😀 \u2028"'
    assert canonical(text) == expected.encode("utf-8")


def test_canonical_has_no_whitespace_and_keeps_literals() -> None:
    assert canonical({"x": [None, True, False, {"y": "z"}], "a": []}) == b'{"a":[],"x":[null,true,false,{"y":"z"}]}'


def test_canonical_lone_surrogate_becomes_replacement_character(tmp_path: Path) -> None:
    doc = load(write(tmp_path, '{"a": "x\\ud800y"}'))
    assert canonical(doc) == '{"a":"x\ufffdy"}'.encode()


# --- reading against a shape ----------------------------------------------------------


def test_member_path() -> None:
    assert member_path("", "command") == "command"
    assert member_path("command", "argv") == "command.argv"
    assert member_path("env", "npm config") == 'env["npm config"]'
    assert member_path("resolved.node", "@babel/core") == 'resolved.node["@babel/core"]'


def test_shape_collects_every_problem_once(tmp_path: Path) -> None:
    s = Shape()
    doc = {"command": {"argv": "npx jest"}, "os": 3}
    assert s.get(doc["command"], "command", "argv", STRINGS) is None
    assert s.get(doc, "", "os", STRING, nullable=True) is None
    assert s.get(doc, "", "missing", STRING) is None
    assert s.get(None, "missing", "child", STRING) is None  # a bad parent is reported once
    assert s.get(doc, "", "absent", STRING, optional=True) is None
    assert [(p.where, p.message) for p in s.problems] == [
        ("command.argv", 'expected a list of strings, got "npx jest"'),
        ("os", "expected a string or null, got 3"),
        ("missing", "missing"),
    ]
    with pytest.raises(CapsuleError) as info:
        s.raise_errors(tmp_path / "c.json")
    assert info.value.line() == f'{tmp_path / "c.json"}: command.argv: expected a list of strings, got "npx jest" (and 2 more problems)'


def test_shape_entries_report_each_bad_entry() -> None:
    s = Shape()
    good = s.entries({"runtimes": {"node": "22", "go": 1, "bad name": None}}, "", "runtimes", STRING)
    assert good == {"node": "22"}
    assert [p.where for p in s.problems] == ["runtimes.go", 'runtimes["bad name"]']
