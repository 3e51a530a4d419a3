"""`replay gc` removes what replays that are gone left behind, and never anything else."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from typing import Any

import pytest

from runner.cli.main import main
from runner.engine import LABEL, OWNER_LABEL, DockerEngine

from tests.envelope import result_of

pytestmark = pytest.mark.integration


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def objects(engine: DockerEngine) -> Any:
    """Containers and a network of a replay that is gone, of a live one, and one not replay's."""
    c = engine.client
    tag = uuid.uuid4().hex[:10]
    host = socket.gethostname()
    gone, alive = {LABEL: f"gc-{tag}", OWNER_LABEL: f"{host}:{dead_pid()}"}, {LABEL: f"gc-{tag}", OWNER_LABEL: f"{host}:{os.getpid()}"}
    made = {
        "gone": c.containers.create("replay-base/debian:bookworm", ["true"], labels=gone, name=f"gc-gone-{tag}"),
        "alive": c.containers.create("replay-base/debian:bookworm", ["true"], labels=alive, name=f"gc-alive-{tag}"),
        "foreign": c.containers.create("replay-base/debian:bookworm", ["true"], labels={"other": tag}, name=f"gc-foreign-{tag}"),
    }
    net = c.networks.create(f"gc-net-{tag}", labels=gone)
    yield tag, made, net
    for ctr in made.values():
        try:
            ctr.remove(force=True)
        except Exception:
            pass
    try:
        net.remove()
    except Exception:
        pass


def test_gc_lists_then_removes_only_what_a_gone_replay_left(objects: Any, engine: DockerEngine,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    tag, made, net = objects
    assert main(["gc", "--dry-run", "--json"]) == 0
    listed = {(f["kind"], f["name"]) for f in result_of(capsys.readouterr().out)["leftovers"]}
    assert {("container", f"gc-gone-{tag}"), ("network", f"gc-net-{tag}")} <= listed
    assert ("container", f"gc-alive-{tag}") not in listed and ("container", f"gc-foreign-{tag}") not in listed
    names = {c.name for c in engine.client.containers.list(all=True)}
    assert f"gc-gone-{tag}" in names  # a dry run removes nothing

    # removal, limited to this test's label so other replays on this machine are never touched
    assert main(["gc", "--label", f"gc-{tag}"]) == 0
    out = capsys.readouterr().out
    assert f"removed container gc-gone-{tag}" in out and "pid" in out
    names = {c.name for c in engine.client.containers.list(all=True)}
    assert f"gc-gone-{tag}" not in names and {f"gc-alive-{tag}", f"gc-foreign-{tag}"} <= names
    assert f"gc-net-{tag}" not in {n.name for n in engine.client.networks.list()}


def test_everything_a_replay_makes_names_its_owner(engine: DockerEngine) -> None:
    from runner.engine import RunSpec

    seen: list[dict[str, str]] = []
    spec = RunSpec(image="replay-base/debian:bookworm", argv=("sh", "-c", "true"), labels=((LABEL, "gc-owner"),))
    res = engine.run(spec)
    assert res.exit_code == 0
    net = engine.create_network(f"gc-owner-{uuid.uuid4().hex[:8]}", {LABEL: "gc-owner"})
    try:
        seen.append(engine.client.networks.get(net).attrs["Labels"])
    finally:
        engine.remove_network(net)
    assert seen[0][OWNER_LABEL] == f"{socket.gethostname()}:{os.getpid()}"
