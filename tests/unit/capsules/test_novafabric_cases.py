"""The data cases of tests/cases/novafabric/: each overlays the minimal-run fixture."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner.capsules import novafabric, read_capsule, verify_capsule
from runner.errors import CapsuleError

from tests.unit.capsules import CASES, EXAMPLES

MINIMAL = EXAMPLES / "novafabric" / "minimal-run"


def overlaid(case: Path, tmp_path: Path) -> Path:
    root = tmp_path / "capsule"
    shutil.copytree(MINIMAL, root)
    for f in case.iterdir():
        if f.name != "expected.json":
            shutil.copy(f, root / f.name)
    return root


@pytest.mark.parametrize("case", sorted(p for p in (CASES / "novafabric").iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_case(case: Path, tmp_path: Path) -> None:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    root = overlaid(case, tmp_path)
    if "read_error" in expected:
        with pytest.raises(CapsuleError) as info:
            read_capsule(root)
        line = info.value.line()
        assert expected["read_error"] in line and str(root) in line and "\n" not in line and len(line) <= 320, line
    else:
        assert read_capsule(root).provenance.format is novafabric.FORMAT
    if expected["verify"] == "refused":
        with pytest.raises(CapsuleError):
            verify_capsule(root)
        return
    result = verify_capsule(root)
    errors = [p.message for p in result.problems if p.severity == "error"]
    assert result.valid is (expected["verify"] == "valid"), errors
    for wanted in expected.get("problems", []):
        assert any(wanted in e for e in errors), (wanted, errors)
