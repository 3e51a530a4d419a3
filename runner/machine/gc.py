"""`replay gc`: remove what earlier replays left behind, and nothing else.

A container or network is a leftover when it carries replay's label and the process
that made it (`replay.owner=<host>:<pid>`) is gone from this host; one without an owner
was made by an older replay and is a leftover too. An iptables rule is a leftover when
it names a replay bridge (`rpl…`) that no longer exists. Objects made on other hosts
(a shared engine) are left alone. A container `replay --keep` kept (labelled replay.kept) is a
leftover like the others once its replay has ended; with an age, only when older than it; and
only the current user's (replay.user), unless all users' are asked for. The images of kept state
(a sealed kept container's, an interrupted `replay shell --kept`'s) go once their owner is gone
and no container that stays uses them. Something another cleanup removed first is not a problem.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass

from ..units import format_duration
from ..engine import KEPT, KEPT_LABEL, LABEL, OWNER_LABEL, USER_LABEL, current_user
from ..engine.inventory import ImageRecord, Inventory, Resource

_CHAINS = ("INPUT", "DOCKER-USER")
_BRIDGE = re.compile(r"-i (rpl[0-9a-f]{1,12})\b")
_GONE_ALREADY = ("no such", "not found", "already in progress")  # the engine's words: another cleanup was first


@dataclass(frozen=True)
class Leftover:
    kind: str  # container | network | image | iptables
    name: str
    owner: str | None
    why: str


def leftovers(engine: Inventory, label: str | None = None, kept_older_than_s: float | None = None,
              all_users: bool = False) -> list[Leftover]:
    """label: only what one replay (replay=<label>) made; iptables rules are then left to a full gc.
    kept_older_than_s: a kept container (--keep) younger than it stays. all_users: other users'
    kept containers too."""
    now, me = time.time(), current_user()
    out = [Leftover(r.kind, r.name, r.labels.get(OWNER_LABEL), _kept(r, kept_older_than_s) + why)
           for r in engine.labelled(f"{LABEL}={label}" if label else LABEL)
           if (why := _gone(r.labels.get(OWNER_LABEL)))
           and not (r.labels.get(KEPT_LABEL) == KEPT and kept_older_than_s is not None and now - r.created < kept_older_than_s)
           and (all_users or r.labels.get(KEPT_LABEL) != KEPT or r.labels.get(USER_LABEL, me) == me)]
    out += _kept_images(engine, label, {f.name for f in out if f.kind == "container"})
    return out if label else out + _stale_rules()


def _kept(r: Resource, older_than_s: float | None) -> str:
    if r.labels.get(KEPT_LABEL) != KEPT:
        return ""
    shown = f" (the id `replay shell --kept` took: {r.id[:12]})" if r.id else ""
    return "kept by --keep" + shown + (f", older than {format_duration(older_than_s)}" if older_than_s is not None else "") + "; "


def _kept_images(engine: Inventory, label: str | None, going: set[str]) -> list[Leftover]:
    """The images of kept state whose owner is gone, used by no container that stays."""
    used = {c.image_id for c in engine.containers() if c.name not in going}
    out = []
    for img in engine.images(label=KEPT_LABEL):
        kind = img.labels.get(KEPT_LABEL)
        if kind not in ("image", "shell") or (label and img.labels.get(LABEL) != label) or img.id in used:
            continue
        if why := _gone(img.labels.get(OWNER_LABEL)):
            out.append(Leftover("image", img.id, img.labels.get(OWNER_LABEL), f"{_image_what(img)}; {why}"))
    return out


def _image_what(img: ImageRecord) -> str:
    what = "a kept container's state" if img.labels.get(KEPT_LABEL) == "image" else "an interrupted `replay shell --kept`'s image"
    return what + (f" ({', '.join(img.tags)})" if img.tags else "")


def remove(engine: Inventory, found: list[Leftover]) -> list[str]:
    """Remove what was found; the problems, one line each (a removal that failed). What is gone
    already (a replay's own cleanup, another gc) is no problem."""
    problems = []
    for item in found:
        try:
            if item.kind in ("container", "network"):
                engine.remove("container" if item.kind == "container" else "network", item.name)
            elif item.kind == "image":
                engine.remove_image(item.name)
            else:
                chain, rule = item.name.split(" ", 1)
                subprocess.run(["iptables", "-D", chain, *rule.split()], check=True, capture_output=True, timeout=30)
        except Exception as exc:  # one that cannot be removed must not stop the others
            if item.kind != "iptables" and any(w in str(exc).lower() for w in _GONE_ALREADY):
                continue
            problems.append(f"{item.kind} {item.name}: {exc}")
    return problems


def _gone(owner: str | None) -> str | None:
    """Why the owner is gone (None: it is alive here, or lives on another host)."""
    if not owner:
        return "made by an older replay (no owner recorded)"
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return None
    if not pid.isdigit():
        return "its owner label is not host:pid"
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return f"the replay that made it (pid {pid}) is gone"
    except PermissionError:
        return None  # alive, another user's
    return None


def _stale_rules() -> list[Leftover]:
    if shutil.which("iptables") is None:
        return []
    out = []
    for chain in _CHAINS:
        proc = subprocess.run(["iptables", "-S", chain], capture_output=True, text=True, timeout=30)
        for line in proc.stdout.splitlines():
            m = _BRIDGE.search(line)
            if m and line.startswith(f"-A {chain} ") and not os.path.exists(f"/sys/class/net/{m.group(1)}"):
                out.append(Leftover("iptables", f"{chain} {line.removeprefix(f'-A {chain} ')}", None,
                                    f"names the bridge {m.group(1)}, which no longer exists"))
    return out
