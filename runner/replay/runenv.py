"""The run-time environment of an attempt: recorded values set, empty set empty,
absent made absent even when the image sets them, argv exactly as recorded."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..build.plan import Plan


def command_env(plan: Plan, image_env: Mapping[str, str],
                extra: Sequence[tuple[str, str]] = ()) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    env: dict[str, str] = {}
    unset: list[str] = []
    withheld = {name for name, setting in plan.env.items() if setting.state == "withheld"}
    for name, setting in plan.env.items():
        if setting.state in ("absent", "withheld"):
            if name in image_env:
                unset.append(name)
        elif setting.state != "supplied":  # a supplied value comes with `extra`, never from the plan
            env[name] = setting.value if setting.state == "set" else ""
    for name, value in extra:
        if name not in withheld:  # a supplied value this capsule's run does not get (planner.supplied_here)
            env[name] = value
    argv = plan.argv
    if unset:
        # The image sets these, and Docker cannot remove an image's variable: let
        # env(1) drop them right before exec (still no shell, argv untouched).
        argv = ("/usr/bin/env", *[a for n in sorted(unset) for a in ("-u", n)], *argv)
    return tuple(env.items()), tuple(argv)
