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
import yaml

from tests.integration.helpers import NOVA, replay

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
    shutil.copytree(NOVA / "minimal-run", dest)
    report = dest / "outputs" / "reports" / "junit.xml"
    report.parent.mkdir(parents=True)
    shutil.copy2(REPORT, report)
    env = yaml.safe_load((dest / "env.lock").read_text())
    env["python"].update(version="3.11.2", installed_packages=[])
    (dest / "env.lock").write_text(yaml.safe_dump(env))
    capsule = yaml.safe_load((dest / "capsule.yaml").read_text())
    capsule.update(command=["python3", "t.py"], exit_code=1, status="failure", outputs=[{
        "name": "junit", "path": "outputs/reports/junit.xml", "media_type": "application/xml",
        "content_hash": "sha256:" + hashlib.sha256(report.read_bytes()).hexdigest(),
        "size_bytes": report.stat().st_size}])
    capsule["host"]["python"] = "3.11.2"
    (dest / "capsule.yaml").write_text(yaml.safe_dump(capsule))
    (dest / "outputs" / "stdout.txt").write_text("plum broke\n")
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
