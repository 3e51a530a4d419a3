"""The sidecar's entry point: the hosts' addresses added, then every capability but one dropped."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import netsetup


@pytest.fixture()
def fake_ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `ip` on PATH that records its arguments (the real one would change this machine)."""
    log = tmp_path / "ip.log"
    tool = tmp_path / "bin" / "ip"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n[ \"$4\" != 10.9.9.9/32 ]\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(netsetup, "interface", lambda: "eth0")
    return log


def calls_file(tmp_path: Path, *addresses: str) -> str:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps({"hosts": [{"name": f"h{i}.example", "address": a} for i, a in enumerate(addresses)]}))
    return str(path)


def test_adds_each_address_then_execs_the_server_without_net_admin(
        tmp_path: Path, fake_ip: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    execs: list[list[str]] = []
    monkeypatch.setattr(netsetup.os, "execvp", lambda prog, argv: execs.append(argv))
    netsetup.main(["--calls", calls_file(tmp_path, "172.16.9.128", "172.16.9.129"), "--", "python3", "server.py"])
    assert fake_ip.read_text().splitlines() == ["-4 addr add 172.16.9.128/32 dev eth0",
                                                "-4 addr add 172.16.9.129/32 dev eth0"]
    (argv,) = execs
    assert argv[:1] == ["setpriv"] and argv[-2:] == ["python3", "server.py"]
    assert "--bounding-set=-all,+net_bind_service" in argv and "--inh-caps=-all" in argv and "--no-new-privs" in argv


def test_an_address_that_cannot_be_added_stops_before_the_server(
        tmp_path: Path, fake_ip: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(netsetup.os, "execvp", lambda prog, argv: pytest.fail("the server must not start"))
    assert netsetup.main(["--calls", calls_file(tmp_path, "10.9.9.9"), "--", "true"]) == 3
    assert "netsetup: cannot add 10.9.9.9 to eth0" in capsys.readouterr().err


def test_a_calls_file_address_that_is_not_ipv4_is_refused(tmp_path: Path, fake_ip: Path) -> None:
    with pytest.raises(ValueError):
        netsetup.main(["--calls", calls_file(tmp_path, "172.16.9.128; reboot"), "--", "true"])
    assert not fake_ip.exists()
