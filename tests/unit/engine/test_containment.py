"""One containment policy, applied through the SDK to every container (run, start, and the shell's)."""
from __future__ import annotations

from runner.engine import Containment
from runner.engine.specs import limits as _limits


def test_the_sdk_gets_the_limits() -> None:
    c = Containment(memory="1g", pids_limit=64, cpus=1.5, cap_drop=("NET_RAW",), cap_add=("NET_ADMIN",))
    sdk = _limits(c)
    assert (sdk["mem_limit"], sdk["pids_limit"], sdk["nano_cpus"]) == ("1g", 64, 1_500_000_000)
    assert sdk["security_opt"] == ["no-new-privileges"] and sdk["cap_drop"] == ["NET_RAW"]
    assert sdk["cap_add"] == ["NET_ADMIN"] and sdk["log_config"]["config"]["max-size"] == "64m"


def test_no_limit_is_left_out_silently() -> None:
    assert _limits(Containment(cpus=None)).get("nano_cpus") is None
