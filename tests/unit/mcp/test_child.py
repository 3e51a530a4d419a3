"""A child's answer as an envelope: the CLI's own, or one that says why there was none;
an error line is never a progress step."""
from __future__ import annotations

import json

import anyio

from runner.codec import envelope
from runner.mcp.child import Finished, enveloped, run_child

from tests.unit.mcp.session import TZ_CLOCK


def test_the_clis_envelope_is_the_answer() -> None:
    printed = envelope("inspect", 2, None, {"kind": "capsule", "message": "c.json: bad", "file": "c.json"})
    assert enveloped("inspect", Finished(2, json.dumps(printed), ("error: c.json: bad",))) == printed


def test_no_json_is_an_internal_error_naming_the_last_error_line() -> None:
    data = enveloped("run", Finished(1, "Traceback ...", ("plan …", "error: something broke")))
    assert (data["schema"], data["exit_code"], data["result"]) == ("replay.run/1", 3, None)
    assert data["error"]["kind"] == "internal"
    assert data["error"]["message"] == ("replay run ended with exit code 1 without a JSON answer: "
                                        "something broke")


def test_another_commands_envelope_is_not_taken() -> None:
    other = json.dumps(envelope("diff", 0, {}))
    assert enveloped("inspect", Finished(0, other, ()))["error"]["kind"] == "internal"


def test_an_error_line_is_no_progress_step() -> None:
    seen: list[str] = []

    async def line(text: str) -> None:
        seen.append(text)

    async def run() -> Finished:
        return await run_child(["render", "--", str(TZ_CLOCK / "capsule.json"), "--bogus"], line)

    done = anyio.run(run)
    assert done.code == 2 and done.stdout == ""
    assert done.lines and done.lines[-1].startswith("error: ")
    assert seen == []  # an error line is the envelope's, never a progress step
