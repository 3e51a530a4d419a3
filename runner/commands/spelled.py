"""Next-step command lines spelled from the declarations: a stage says what more it would ask
(an undecided walk: the runs it likely still needs), the command's declaration says how a user
types it, so the printed line parses as printed (tests/unit/commands/test_printed_lines.py)."""
from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from ..bisect.walk import Walk
from ..secretrules import mask_urls
from .spec import Command

NOT_SHOWN = ("env", "salt")  # values that may be secrets: never printed, the user gives them again


def next_step(values: Mapping[str, Any], declared: Command, walk: Walk) -> dict[str, Any] | None:
    """When the run budget left a walk undecided and more runs likely decide it: the command that asks
    for them (the same bisect, --max-runs raised by the runs it likely still needs, --resume)."""
    if walk.more_runs is None:
        return None
    runs = walk.spent + walk.more_runs
    words = ["replay", *declared.words]
    masked: list[str] = []  # options whose value carried a credential (a --repo URL's token): shown masked
    for p in declared.params:
        value = values.get(p.name)
        if p.name in ("max_runs", "resume", *NOT_SHOWN) or value is None or value == p.default or value == []:
            continue
        if p.option is None:
            words.append(mask_urls(str(value)))
        elif p.kind == "flag":
            words.append(p.option)
        else:
            for item in value if isinstance(value, list) else [value]:
                said = f"{item:g}" if isinstance(item, float) else str(item)
                words += [p.option, mask_urls(said)]
                masked += [p.option] if mask_urls(said) != said and p.option not in masked else []
    words += ["--max-runs", str(runs), "--resume"]
    again = [p.option for p in declared.params if p.name in NOT_SHOWN and values.get(p.name) and p.option] + masked
    with_secrets = f" (with the same {' and '.join(again)} values)" if again else ""
    return {"argv": words, "command": shlex.join(words) + with_secrets,
            "why": f"about {walk.more_runs} more run(s) would likely decide it: 4 in 5 continuations drawn from "
                   f"what is believed now were decided within them"}
