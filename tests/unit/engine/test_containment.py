"""One containment policy, applied the same way through the SDK (run, start) and the CLI (shell)."""
from __future__ import annotations

from runner.engine import Containment
from runner.engine.specs import limit_flags as _limit_flags, limits as _limits


def test_the_sdk_and_the_cli_get_the_same_limits() -> None:
    c = Containment(memory="1g", pids_limit=64, cpus=1.5, cap_drop=("NET_RAW",), cap_add=("NET_ADMIN",))
    sdk = _limits(c)
    assert (sdk["mem_limit"], sdk["pids_limit"], sdk["nano_cpus"]) == ("1g", 64, 1_500_000_000)
    assert sdk["security_opt"] == ["no-new-privileges"] and sdk["cap_drop"] == ["NET_RAW"]
    assert sdk["cap_add"] == ["NET_ADMIN"] and sdk["log_config"]["config"]["max-size"] == "64m"
    assert _limit_flags(c) == ["--memory", "1g", "--pids-limit", "64", "--cpus", "1.5", "--security-opt",
                               "no-new-privileges", "--cap-drop=NET_RAW", "--cap-add=NET_ADMIN"]


def test_no_limit_is_left_out_silently() -> None:
    assert _limit_flags(Containment(memory=None, pids_limit=None, no_new_privileges=False)) == []
    assert _limits(Containment(cpus=None)).get("nano_cpus") is None
