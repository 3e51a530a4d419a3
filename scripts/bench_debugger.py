"""Debugger row of scripts/bench.py (issues 36 and 40):
  --debugger (Go)     `replay CAPSULE --debugger` on a one-package Go module (a failing test, Go
                      1.22.10), its images built: from the run's start (its progress line) to
                      "waits for a client" on stdout, which is said once Delve listens (target:
                      within 15 s). The client then connects at once, runs the test to its end and
                      detaches; the run's last line must give the test's own verdict.
Runs on its own too: `.venv/bin/python scripts/bench_debugger.py`.
"""
from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
Row = Callable[[str, str, str, bool | None], None]
TEST = 'package boom\n\nimport "testing"\n\nfunc TestBoom(t *testing.T) {\n\tt.Fatalf("error: boom")\n}\n'
OUTPUT = "--- FAIL: TestBoom (0.00s)\n    boom_test.go:6: error: boom\nFAIL\nFAIL\texample.com/boom\t0.002s\nFAIL\n"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def _capsule(tmp: Path) -> tuple[Path, Path]:
    repo = tmp / "repo"
    repo.mkdir()
    (repo / "go.mod").write_text("module example.com/boom\n\ngo 1.22\n")
    (repo / "boom_test.go").write_text(TEST)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "boom"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                            check=True).stdout.strip()
    from runner.verdict import signature as sig

    fs = sig.compute(OUTPUT, 1, None)
    capsule = {  # a twin v1 capsule, as its recorder writes one
        "twin": 1, "createdAt": "2026-11-27T14:03:11.482Z", "generator": "twin 0.1.0",
        "command": {"argv": ["go", "test", "./..."], "cwd": ".", "exitCode": 1, "signal": None, "durationMs": 500,
                    "outcome": "fail", "failure": {"signature": fs.signature, "keyLines": list(fs.key_lines),
                                                   "outputTail": sig.output_tail(OUTPUT)}},
        "os": {"platform": "linux", "arch": "x64", "release": "6.1.0-27-amd64", "distro": "debian",
               "distroVersion": "12", "libc": "glibc", "libcVersion": "2.36"},
        "runtimes": {"go": "1.22.10"}, "tools": {}, "packageManagers": [], "resolved": {"node": {}},
        "repo": {"remote": str(repo), "commit": commit, "branch": "main", "dirty": False, "diff": "",
                 "diffTruncated": False, "diffRedacted": False, "untracked": []},
        "env": {}, "locale": {"timeZone": None, "locale": "en-US"},
        "redaction": {"rulesVersion": 2, "valuesIncluded": [], "hashedValues": False, "scrubbed": {}},
    }
    path = tmp / "capsule.json"
    path.write_text(json.dumps(capsule))
    return path, repo


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _once(capsule: Path, repo: Path, env: dict[str, str]) -> tuple[float, str]:
    """Seconds from the run's start to "waits for a client", and the run's last line."""
    port = _port()
    proc = subprocess.Popen([sys.executable, "-m", "runner", str(capsule), "--repo", str(repo), "--debugger",
                             "--debugger-port", str(port)], env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    started: queue.Queue[float] = queue.Queue()

    def progress() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "run under the debugger" in line:
                started.put(time.monotonic())
    threading.Thread(target=progress, daemon=True).start()
    try:
        assert proc.stdout is not None
        last = ""
        for line in proc.stdout:
            if "waits for a Delve client" in line:
                waited = time.monotonic() - started.get(timeout=5)
                with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
                    for n, (method, params) in enumerate((("Command", {"name": "continue"}),
                                                           ("Detach", {"Kill": True})), 1):
                        sock.sendall(json.dumps({"method": f"RPCServer.{method}", "params": [params],
                                                 "id": n}).encode())
                        sock.recv(65536)
            last = line.strip() or last
        proc.wait(timeout=300)
        return waited, last
    finally:
        if proc.poll() is None:
            proc.kill()


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    capsule, repo = _capsule(tmp)
    env = {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])}
    _once(capsule, repo, env)  # the images, built once
    waited, last = _once(capsule, repo, env)
    said = "the tests failed" in last
    row("--debugger (Go): run start -> waits", f"{waited:.1f}s; end: {'the tests failed' if said else last[:30]}",
        "<= 15 s, test's verdict", waited <= 15.0 and said)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from benchrow import row

    with tempfile.TemporaryDirectory(prefix="replay-bench-debugger-") as t:
        run(Path(t), dict(os.environ), float("nan"), row)
