"""JUnit reports read back out of the attempt's container (engine RunSpec.read_back): a NovaFabric
capsule keeps the report its run wrote (outputs/reports/junit.xml); the replayed run writes its
own at the same place, prints another message and fails the same tests, so it is the recorded
failure (issue 30: the same exit code and the same failing tests). Without the read-back the
output alone names no test and the signature differs: a different failure."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.integration.helpers import nova_run, replay

pytestmark = pytest.mark.slow

PROGRAM = """\
import os, pathlib, shutil, sys
os.makedirs("reports", exist_ok=True)
shutil.copy("expected.xml", "reports/junit.xml")
print("pear broke")  # the recorded run printed "plum broke": the signature differs
sys.exit(1)
"""
REPORT = Path(__file__).resolve().parents[1] / "fixtures" / "outcomes" / "pytest" / "junit.xml"


def junit_capsule(dest: Path) -> Path:
    data = REPORT.read_bytes()
    nova_run(dest, ["python3", "t.py"], "plum broke\n", {"installed_packages": []}, exit_code=1, status="failure",
             outputs=[{"name": "junit", "path": "outputs/reports/junit.xml", "media_type": "application/xml",
                       "content_hash": "sha256:" + hashlib.sha256(data).hexdigest(), "size_bytes": len(data)}])
    (dest / "outputs" / "reports").mkdir(parents=True)
    (dest / "outputs" / "reports" / "junit.xml").write_bytes(data)
    return dest


def test_the_junit_report_the_attempt_wrote_decides(engine: object, capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:
    capsule = junit_capsule(tmp_path / "capsule")
    src = tmp_path / "src"
    src.mkdir()
    (src / "t.py").write_text(PROGRAM)
    shutil.copy2(REPORT, src / "expected.xml")
    rc, report = replay(capsys, capsule, "-n", "1", "--source", src)
    [attempt] = report["attempts"]
    assert attempt["stdout"] == "pear broke\n", attempt
    assert (rc, report["verdict"]) == (0, "reproduced"), report
    assert [t["framework"] for t in attempt["tests"]] == ["junit"], attempt
