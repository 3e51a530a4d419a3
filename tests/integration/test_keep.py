"""--keep and `replay shell` after a replay (issue 29), with real containers: the kept attempt is one
labelled stopped (sealed) container that `replay shell --kept` enters with its files and `replay gc` removes;
`replay shell` on a CodeInstances capsule is served the recorded HTTP."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from runner.cli.main import main
from runner.engine import KEPT_LABEL, LABEL, OWNER_LABEL

from tests.envelope import result_of
from tests.integration.helpers import ROOT, twin_capsule, write_json

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FETCH = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"


def replay_cli(*args: str | Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`replay ARGS` as its own process, which ends (so what it kept is a leftover for `replay gc`)."""
    return subprocess.run([sys.executable, "-m", "runner", *map(str, args)], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=900)


def _failing(tmp_path: Path) -> tuple[Path, str]:
    """A capsule whose command writes a file, then fails; the file's text is this test's alone."""
    nonce = uuid.uuid4().hex
    argv = ["sh", "-c", f"echo {nonce} > /tmp/left.txt; echo 'Error: boom'; exit 3"]
    return write_json(tmp_path / "fail.json", twin_capsule(argv, "Error: boom\n", 3)), nonce


def _containers(engine: Any, label: str) -> list[Any]:
    return engine.client.containers.list(all=True, filters={"label": label})


def test_keep_leaves_one_labelled_container_shell_enters_it_gc_removes_it(
        engine: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsule, nonce = _failing(tmp_path)
    proc = replay_cli(capsule, "--keep", "-n", "3", "--json")
    report = result_of(proc.stdout)
    assert proc.returncode == 0 and report["verdict"] == "reproduced", proc.stderr[-2000:]
    kept = report["kept"]
    assert kept["command"] == f"replay shell --kept {kept['id']}"
    ctr = engine.client.containers.get(kept["id"])
    label = ctr.labels[LABEL]
    try:
        # exactly one of the three attempts' containers stays, stopped, labelled replay's and kept
        (only,) = _containers(engine, f"{LABEL}={label}")
        assert only.id == ctr.id and only.status == "created" and only.labels[KEPT_LABEL] == "1"  # sealed: never ran

        # the shell sees the file the failing run wrote; its temporary image is gone afterwards
        shell = replay_cli("shell", "--kept", kept["id"], stdin="cat /tmp/left.txt\nexit 0\n")
        assert shell.returncode == 0, shell.stderr[-2000:]
        assert shell.stdout.splitlines() == [nonce]
        assert "recorded command (the shell's history: Up): sh -c" in shell.stderr
        mine = [f"{KEPT_LABEL}=shell", f"replay.capsule={report['capsule']['id']}"]  # the committed image's labels
        assert engine.client.images.list(filters={"label": mine}) == []

        # gc: --older-than spares a kept container younger than it; without it, it goes
        assert main(["gc", "--label", label, "--older-than", "1h"]) == 0
        assert len(_containers(engine, f"{LABEL}={label}")) == 1
        capsys.readouterr()
        assert main(["gc", "--label", label, "--json"]) == 0
        left = result_of(capsys.readouterr().out)["leftovers"]
        (gone,) = [g for g in left if g["kind"] == "container"]
        (image,) = [g for g in left if g["kind"] == "image"]  # the sealed container's state goes with it
        assert image["why"].startswith("a kept container's state (replay/img:kept-"), image
        assert gone["why"].startswith(f"kept by --keep (the id `replay shell --kept` took: {report['kept']['id']}); ")
        assert _containers(engine, f"{LABEL}={label}") == []
    finally:
        for c in _containers(engine, f"{LABEL}={label}"):
            c.remove(force=True)


def test_shell_on_a_codeinstances_capsule_gets_the_recorded_http(engine: Any) -> None:
    """The recorded command, from the shell, is answered by the sidecar as in the replay; a call the
    recording lacks is listed when the shell ends."""
    argv = json.loads(FETCH.read_text())["command"]["argv"]
    script = (" ".join(["python3", "-c", json.dumps(argv[2])]) + "\n"
              "python3 -c \"import urllib.request; urllib.request.urlopen('https://api.example.com/v1/other')\""
              " 2>/dev/null || echo refused\n"
              "date +%F\n")
    proc = replay_cli("shell", FETCH, stdin=script)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["hello", "refused", "2026-10-13"]  # the recorded answer, the recorded clock
    assert "served   #1 GET https://api.example.com/v1/greeting -> response 200" in proc.stderr
    assert "UNMATCHED GET https://api.example.com/v1/other" in proc.stderr


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_no_image_or_stopped_container_replay_leaves_holds_an_env_value(engine: Any, tmp_path: Path) -> None:
    """--keep with --env: the kept container's config, logs and image hold no --env value; neither does
    the image an interrupted `replay shell --kept` leaves, which `replay gc` then removes."""
    secret = f"tok-{uuid.uuid4().hex}"
    argv = ["sh", "-c", f"echo \"token=$API_TOKEN\"; echo 'Error: boom' # {uuid.uuid4().hex}; exit 3"]
    capsule = write_json(tmp_path / "env.json", twin_capsule(argv, "Error: boom\n", 3))
    proc = replay_cli(capsule, "--keep", "-n", "2", "--env", f"API_TOKEN={secret}", "--json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    kept = result_of(proc.stdout)["kept"]["id"]
    ctr = engine.client.containers.get(kept)
    label = ctr.labels[LABEL]
    shell = None
    try:
        assert ctr.status == "created"  # sealed: its state in a container that never ran
        assert secret not in json.dumps(ctr.attrs) and secret.encode() not in ctr.logs()
        assert secret not in json.dumps(engine.client.images.get(ctr.image.id).attrs)
        # an interrupted shell on it: its image is left, without the value, and gc removes it
        shell = subprocess.Popen([sys.executable, "-m", "runner", "shell", "--kept", kept], cwd=ROOT,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=_default_sigint)
        assert shell.stdin is not None and shell.stdout is not None
        shell.stdin.write("echo in-the-shell\n")
        shell.stdin.flush()
        assert shell.stdout.readline().strip() == "in-the-shell"
        mine = {"label": [f"{KEPT_LABEL}=shell", f"{OWNER_LABEL}={socket.gethostname()}:{shell.pid}"]}
        (image,) = engine.client.images.list(filters=mine)
        shell.kill()  # cut short: nothing of its own cleanup runs
        shell.wait(60)
        shell.stdin.close()  # the shell's container ends (its CLI's input is gone)
        assert secret not in json.dumps(image.attrs)
        for stopped in _containers(engine, f"{LABEL}={image.labels[LABEL]}"):
            assert secret not in json.dumps(stopped.attrs) and secret.encode() not in stopped.logs()
        assert main(["gc", "--label", image.labels[LABEL]]) == 0
        assert engine.client.images.list(filters=mine) == []
        assert main(["gc", "--label", label]) == 0
        assert _containers(engine, f"{LABEL}={label}") == []
        assert engine.client.images.list(filters={"label": [f"{KEPT_LABEL}=image", f"{LABEL}={label}"]}) == []
    finally:
        if shell is not None and shell.poll() is None:
            shell.kill()
        for c in _containers(engine, f"{LABEL}={label}"):
            c.remove(force=True)


def test_keep_with_env_gives_the_command_the_values_exactly_and_nothing_of_the_shell(engine: Any,
                                                                                  tmp_path: Path) -> None:
    """The --env file is read by the image's sh (no perl needed): a value with quotes, `$(...)` and a
    newline arrives as given, argv as recorded: the capsule reproduces (the environment's exactness:
    tests/unit/replay/test_keep.py, on dash, busybox and bash)."""
    value = "it's $(echo no) `echo no` \\ \"x\"\nline 2"
    check = '[ "$API_TOKEN" = "$EXPECTED" ] && [ "$1" = "a b" ] && { echo "Error: boom"; exit 3; }; echo other'

    argv = ["sh", "-c", f"{check} # {uuid.uuid4().hex}", "sh", "a b"]
    # EXPECTED is recorded (in the container's config as usual); API_TOKEN comes with --env (through the file)
    capsule = write_json(tmp_path / "env.json", twin_capsule(argv, "Error: boom\n", 3,
                                                                    env={"EXPECTED": {"state": "set", "value": value}}))
    proc = replay_cli(capsule, "--keep", "-n", "1", "--env", f"API_TOKEN={value}", "--json")
    try:
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]  # reproduced
    finally:
        kept = (json.loads(proc.stdout).get("result") or {}).get("kept") if proc.stdout else None
        if kept:
            label = engine.client.containers.get(kept["id"]).labels[LABEL]
            assert main(["gc", "--label", label]) == 0
