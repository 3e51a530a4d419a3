"""`replay CAPSULE` under recorded HTTP traffic, end to end through the CLI (issue 4)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli.main import main
from tests.envelope import result_of

pytestmark = pytest.mark.integration

FETCH = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    rc = main([*args, "--json"])
    return rc, result_of(capsys.readouterr().out)


def test_codeinstances_instance_replays_on_its_own(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _run(capsys, str(FETCH), "-n", "2")
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert [a["stdout"] for a in report["attempts"]] == ["hello\n", "hello\n"]
    assert [c["seq"] for c in report["http"]["served"]] == [1]
    assert report["http"]["unmatched"] == [] and report["http"]["unused"] == []
    assert any(f["fact"] == "clock" and f["status"] == "exact" for f in report["fidelity"])


def _twin_fetching(tmp_path: Path) -> Path:
    """A twin capsule (run outside a git tree) whose command fetches the recorded URL."""
    data = json.loads(FETCH.read_text())
    capsule = {
        "twin": 1, "createdAt": "2026-10-13T08:00:00.000Z", "generator": "twin 0.1.0",
        "command": {"argv": data["command"]["argv"], "cwd": ".", "exitCode": 0, "signal": None,
                    "durationMs": 200, "outcome": "pass", "failure": None},
        "os": {"platform": "linux", "arch": "x64", "release": "6.1.0", "distro": "debian", "distroVersion": "12",
               "libc": "glibc", "libcVersion": "2.36"},
        "runtimes": {"python": "3.11.2"}, "tools": {}, "packageManagers": [], "resolved": {}, "repo": None,
        "env": {"TZ": {"state": "set", "value": "UTC"}}, "locale": {"timeZone": "UTC", "locale": "en-US"},
        "redaction": {"rulesVersion": 2, "valuesIncluded": ["TZ"], "hashedValues": False, "scrubbed": {}},
    }
    path = tmp_path / "fetch.twin.json"
    path.write_text(json.dumps(capsule))
    return path


def test_any_capsule_runs_under_an_instances_traffic(engine: object, capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    capsule = _twin_fetching(tmp_path)
    rc, report = _run(capsys, str(capsule), "-n", "1", "--http", str(FETCH))
    assert (rc, report["verdict"]) == (0, "reproduced")
    assert report["attempts"][0]["stdout"] == "hello\n"
    # without the recorded traffic there is no network at all: the fetch fails
    rc, report = _run(capsys, str(capsule), "-n", "1")
    assert (rc, report["verdict"]) == (1, "not-reproduced")
    assert report["attempts"][0]["exit_code"] != 0
    assert report["http"] is None


def test_programs_that_sleep_run_under_the_recorded_clock(engine: object, capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    """libfaketime with a relative offset: the recorded date, and sleeping still works."""
    capsule = _twin_fetching(tmp_path)
    data = json.loads(capsule.read_text())
    data["command"]["argv"] = ["python3", "-c", "import time, datetime; time.sleep(0.2); print(datetime.date.today())"]
    capsule.write_text(json.dumps(data))
    rc, report = _run(capsys, str(capsule), "-n", "1", "--http", str(FETCH))
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"][0]["output_tail"]
    assert report["attempts"][0]["stdout"] == "2026-10-13\n"


# -- issue 12: every recorded host keeps its own behaviour, on the same port -------------------------

CASES = Path(__file__).resolve().parents[1] / "cases" / "codeinstances"


@pytest.mark.parametrize("case, second", [
    ("two-hosts-refused", "second URLError ConnectionRefusedError [Errno 111] Connection refused"),
    ("two-hosts-connect-timeout", "second URLError TimeoutError timed out"),
    # http.client's ConnectionResetError for a connection that ends before the status line: Python 3.11's
    # ssl module reports a TCP reset under TLS as the end of the stream (SSL_read_ex returns 0)
    ("two-hosts-reset", "second RemoteDisconnected Remote end closed connection without response"),
])
def test_the_second_https_host_fails_as_recorded_while_the_first_answers_on_443(
        engine: object, capsys: pytest.CaptureFixture[str], case: str, second: str) -> None:
    instance = CASES / case / "capsule.json"
    rc, report = _run(capsys, str(instance), "-n", "1")
    assert report["attempts"][0]["stdout"] == f"first 200 hello\n{second}\n", report["attempts"][0]["output_tail"]
    assert (rc, report["verdict"]) == (0, "reproduced")
    http = report["http"]
    assert [(s["seq"], s["approximated"]) for s in http["served"] if s["seq"] == 1] == [(1, None)]
    assert all(s["approximated"] is None for s in http["served"])  # nothing emulated as something else
    assert http["unmatched"] == [] and http["unused"] == [] and http["unrecorded_hosts"] == []


def test_a_host_the_recording_lacks_is_named_with_the_nearest_recorded_one(
        engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    instance = CASES / "unrecorded-host" / "capsule.json"
    rc, report = _run(capsys, str(instance), "-n", "1")
    assert (rc, report["verdict"]) == (0, "reproduced"), report["attempts"][0]["output_tail"]
    assert report["http"]["unrecorded_hosts"] == [{"host": "apl.example.com", "nearest": "api.example.com"}]
    rc = main([str(instance), "-n", "1"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "contacted, not in the recording: apl.example.com (nearest recorded host: api.example.com)" in text


# A PEM private key block: its header line, then a full line of base64. (Debian's TLS libraries
# carry self-test keys of their own: what counts is what the replay adds.)
PEM_KEY = rb"-----BEGIN (?:EC |RSA |ENCRYPTED )?PRIVATE KEY-----\r?\n[A-Za-z0-9+/]{64}\r?\n"
KEY_PROBE = rf"""
import hashlib, os, re
pem = re.compile({PEM_KEY!r})
found = set()
for root, dirs, files in os.walk("/"):
    if root in ("/proc", "/sys", "/dev"):
        dirs[:] = []
        continue
    for name in files:
        path = os.path.join(root, name)
        try:
            if not os.path.islink(path) and os.path.getsize(path) < 4 << 20:
                found |= {{hashlib.sha256(m.group()).hexdigest()[:12] for m in pem.finditer(open(path, "rb").read())}}
        except OSError:
            pass
print("keys", sorted(found))
"""


def test_the_http_replay_puts_no_private_key_where_the_program_is(engine: object,
                                                                  capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    """The replay's CA and host keys stay in replay's memory and the sidecar: the replayed program,
    which trusts the CA, finds no private key in its container that is not there without the
    recorded traffic (the image's own)."""
    data = json.loads(_twin_fetching(tmp_path).read_text())
    data["command"]["argv"] = ["python3", "-c", KEY_PROBE]
    capsule = tmp_path / "keys.twin.json"
    capsule.write_text(json.dumps(data))
    _, with_http = _run(capsys, str(capsule), "-n", "1", "--http", str(FETCH))
    _, without = _run(capsys, str(capsule), "-n", "1")
    assert with_http["http"] is not None and without["http"] is None
    seen = with_http["attempts"][0]["stdout"]
    assert seen.startswith("keys [") and seen == without["attempts"][0]["stdout"], with_http["attempts"][0]["output_tail"]
