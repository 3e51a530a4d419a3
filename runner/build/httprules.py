"""The recorded HTTP calls in a replay plan (part of the planner): the names matching leaves
out (--http-ignore), and a fidelity row for every call the replay network cannot offer, so
it is named when the plan is made, before any attempt (the session says it again at run time)."""
from __future__ import annotations

import re
from collections.abc import Sequence

from ..capsules.model import HttpCall
from ..errors import UsageError
from ..httpreplay.hostplan import plan_hosts
from .plan import Fidelity

MAX_IGNORED = 64
# A query parameter, form field, JSON member or header name: printable, no blank, no `=` `&` `#`.
_NAME = re.compile(r"[!-~]{1,128}", re.ASCII)


def http_ignore(names: Sequence[str]) -> tuple[str, ...]:
    """--http-ignore NAME...: checked (exit 2, one line), lower-cased, each once."""
    if len(names) > MAX_IGNORED:
        raise UsageError(f"--http-ignore: at most {MAX_IGNORED} names")
    for name in names:
        if not _NAME.fullmatch(name) or any(c in name for c in "=&#"):
            raise UsageError(f"--http-ignore {name!r}: a parameter, field or header name (no blank, '=', '&' or '#')")
    return tuple(sorted({n.lower() for n in names}))


def http_rows(calls: Sequence[HttpCall], denied: Sequence[str]) -> list[Fidelity]:
    """One `not applied` row per host (and port) whose recorded calls the replay cannot serve."""
    plan = plan_hosts(calls, denied)
    rows = []
    for where, seqs, why in plan.unservable_by_host(calls):
        shown = ", ".join(f"#{s}" for s in seqs[:6]) + (" …" if len(seqs) > 6 else "")
        rows.append(Fidelity(f"http {where}", f"{len(seqs)} call(s) ({shown})", "-", "not applied",
                             f"not served: {why}"))
    for host in plan.literals:
        rows.append(Fidelity(f"http {host}", "an IPv4 address", "the replay server at that address", "exact",
                             "the sidecar holds it on the replay network (unless this machine's own network "
                             "does: then it is named before the first attempt)"))
    return rows
