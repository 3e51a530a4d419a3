"""`replay mcp` replays for real: the bundled example through the `replay` tool (reproduced,
with progress notifications), and a call cancelled mid-attempt that leaves nothing in the
engine, as Ctrl-C does. The server is the real process, driven by the SDK's client."""
from __future__ import annotations

import os
import socket
import subprocess
import uuid
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from runner.engine import LABEL, OWNER_LABEL

from tests.integration.helpers import ROOT, TZ_CLOCK, twin_capsule, write_json
from tests.services import wait_until
from tests.unit.mcp.session import envelope_of, server_session

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # minutes: `pytest -m "not slow"` for a quick run
GREETING = ROOT / "tests" / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"
CALL_LIMIT_S = 900  # a cold build of the example on a loaded 2-core machine


def test_the_replay_tool_reproduces_the_bundled_example_with_progress(engine: Any) -> None:
    steps: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        steps.append((value, message))

    async def run() -> dict[str, Any]:
        with anyio.fail_after(CALL_LIMIT_S):
            async with server_session() as session:
                result = await session.call_tool(
                    "replay", {"capsule": str(TZ_CLOCK / "capsule.json"), "repo": str(TZ_CLOCK / "repo.bundle"),
                               "attempts": 1}, progress_callback=progress)
                return envelope_of(result)

    data = anyio.run(run)
    assert (data["exit_code"], data["error"]) == (0, None), data
    assert data["result"]["verdict"] == "reproduced"
    assert [a["classification"] for a in data["result"]["attempts"]] == ["recorded"]
    messages = [m for _, m in steps]
    starts = [m for m in messages if m and m.endswith("…")]  # the stages, as the CLI prints them on stderr
    assert starts[:3] == ["verify capsule …", "plan …", "resolve base bookworm …"], messages
    assert "attempt 1/1 …" in starts and any(m and m.startswith("attempt 1/1 done in") for m in messages)
    values = [v for v, _ in steps]
    assert values == sorted(values) and len(set(values)) == len(values)  # progress only grows


def labelled(engine: Any, key: str, value: str) -> list[str]:
    """What the engine holds with this label (the low-level API: nothing inspected that may just have gone)."""
    flt = {"label": f"{key}={value}"}
    return ([f"container {c['Names'][0]}" for c in engine.client.api.containers(all=True, filters=flt)]
            + [f"network {n['Name']}" for n in engine.client.api.networks(filters=flt)])


def attempt_container(engine: Any, marker: str) -> dict[str, Any] | None:
    """The attempt's container (its command carries the marker), not the image probe's."""
    for c in engine.client.api.containers(all=True, filters={"label": LABEL}):
        if marker in (c.get("Command") or ""):
            return dict(c)
    return None


def stale_rules() -> list[str]:
    """INPUT rules for replay's bridges (rpl*) that no longer exist: what a cleanup failed to remove."""
    out = subprocess.run(["iptables", "-S", "INPUT"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if " -i rpl" in line
            and not os.path.exists(f"/sys/class/net/{line.split(' -i ')[1].split()[0]}")]


@pytest.mark.parametrize("how", ["cancel", "disconnect"])
def test_a_replay_stopped_mid_attempt_leaves_nothing_in_the_engine(engine: Any, tmp_path: Path, how: str) -> None:
    """A cancelled call, and a client that goes away mid-call, stop the replay as Ctrl-C does."""
    marker = uuid.uuid4().hex  # a command of its own: this replay's container, no one else's
    capsule = write_json(tmp_path / "capsule.json", twin_capsule(["sh", "-c", f"sleep 300 # {marker}"], "", 0))
    found: dict[str, Any] = {}
    rules_before = stale_rules()

    async def attempt_started() -> None:
        found["container"] = await anyio.to_thread.run_sync(
            lambda: wait_until("the attempt's container", lambda: attempt_container(engine, marker), CALL_LIMIT_S))

    async def run() -> dict[str, Any] | None:
        with anyio.CancelScope() as connection:
            async with server_session() as session:
                async with anyio.create_task_group() as tg:
                    async def call() -> None:
                        # the recorded HTTP calls too: a sidecar and a network to remove as well
                        found["answer"] = await session.call_tool(
                            "replay", {"capsule": str(capsule), "attempts": 1, "http": str(GREETING)})

                    tg.start_soon(call)
                    await attempt_started()
                    # cancel: the client's notifications/cancelled; disconnect: the client closes the server
                    (tg.cancel_scope if how == "cancel" else connection).cancel()
                # the server still answers, once it has stopped the replay
                return envelope_of(await session.call_tool("inspect", {"capsule": str(capsule)}))
        return None

    after = anyio.run(run)
    assert "answer" not in found  # the call was stopped, not answered
    if how == "cancel":
        assert after is not None and after["exit_code"] == 0
    labels = found["container"]["Labels"]
    label, owner = labels[LABEL], labels[OWNER_LABEL]
    assert label.startswith("r-") and owner.startswith(f"{socket.gethostname()}:")
    wait_until("the replay's containers and networks removed", lambda: not labelled(engine, LABEL, label)
               and not labelled(engine, OWNER_LABEL, owner), 60,
               lambda: ", ".join(labelled(engine, LABEL, label) + labelled(engine, OWNER_LABEL, owner)))
    pid = int(owner.rsplit(":", 1)[1])
    wait_until("the replay's process gone", lambda: not os.path.exists(f"/proc/{pid}"), 60)
    assert stale_rules() == rules_before
