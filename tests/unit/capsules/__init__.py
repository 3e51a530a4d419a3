"""Tests of the capsule readers.

``check_case`` runs one data case of tests/cases/<format>/<case>/: a ``capsule.json``
and an ``expected.json`` saying what read() and verify() must answer.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from runner.errors import CapsuleError

CASES = Path(__file__).resolve().parents[2] / "cases"
EXAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "examples"


def case_dirs(fmt: str) -> list[Path]:
    return sorted(p for p in (CASES / fmt).iterdir() if (p / "expected.json").is_file())


def check_case(reader: ModuleType, case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    capsule = case / "capsule.json"
    if "read_error" in expected:
        with pytest.raises(CapsuleError) as info:
            reader.read(capsule)
        assert expected["read_error"] in info.value.line()
        assert info.value.line().startswith(f"{capsule}: ")
        assert "\n" not in info.value.line()
        if "error_type" in expected:
            assert type(info.value).__name__ == expected["error_type"]
    else:
        parsed = reader.detect(capsule)
        assert parsed is not None
        assert reader.read(capsule, parsed).provenance.format is reader.FORMAT

    if expected["verify"] == "refused":
        with pytest.raises(CapsuleError):
            reader.verify(capsule, ())
        return
    result = reader.verify(capsule, ())
    errors = [f"{p.where}: {p.message}" if p.where else p.message for p in result.problems if p.severity == "error"]
    assert result.valid is (expected["verify"] == "valid"), errors
    for wanted in expected.get("problems", []):
        assert any(wanted in line for line in errors), (wanted, errors)
