"""Run-time environment: set, empty, absent (even when the image sets it)."""
from __future__ import annotations

from runner.build.sources.baseimage import DEFAULT
from runner.capsules.model import FrozenMap
from runner.build.plan import EnvSetting, Plan
from runner.replay.runenv import command_env


def _plan(env: dict[str, EnvSetting]) -> Plan:
    return Plan(title="t", capsule_id="c", base=DEFAULT, argv=("node", "--test"), env=FrozenMap(env))


def test_set_empty_and_absent() -> None:
    env, argv = command_env(_plan({"TZ": EnvSetting("set", "America/New_York"), "CI": EnvSetting("empty"),
                                   "NODE_ENV": EnvSetting("absent")}), {"PATH": "/usr/bin"})
    assert dict(env) == {"TZ": "America/New_York", "CI": ""}
    assert argv == ("node", "--test")  # nothing to unset: the image does not set NODE_ENV


def test_absent_variables_the_image_sets_are_removed_without_a_shell() -> None:
    env, argv = command_env(_plan({"LANG": EnvSetting("absent"), "A": EnvSetting("absent")}),
                            {"LANG": "C.UTF-8", "A": "1", "PATH": "/usr/bin"})
    assert "LANG" not in dict(env)
    assert argv == ("/usr/bin/env", "-u", "A", "-u", "LANG", "node", "--test")


def test_extra_variables_come_last_and_win() -> None:
    env, _ = command_env(_plan({"SSL_CERT_FILE": EnvSetting("set", "/x")}), {}, [("SSL_CERT_FILE", "/replay/ca.crt")])
    assert dict(env)["SSL_CERT_FILE"] == "/replay/ca.crt"
