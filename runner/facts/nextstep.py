"""What `replay diff` suggests running next, as a command that works as printed.

A bisect from the passing capsule to the failing one when exactly one of them records a
failure, with `--commits` when the commit is what differs (a plain bisect keeps every trial
at one commit, so it would answer "no culprit"); otherwise a replay of A. The command
carries the options the diff was given (`--repo`, `--mirror`), and says what only the user
can supply: `--repo PATH_OR_URL` when a capsule records a commit without a remote that can
be fetched, `--env NAME=…` for each differing variable a capsule records as set without its
value (one recorded by name only on both sides is left out: nothing says it matters).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ..capsules.model import Capsule
from .factkeys import SOURCE_COMMIT

REPO_PLACEHOLDER = "PATH_OR_URL"
VALUE_PLACEHOLDER = "…"
_NETWORK_URL = re.compile(r"^(https?|git|ssh)://|^[\w.-]+@[\w.-]+:")  # as build/sources/repo.py fetches them


def next_step(a: Capsule, b: Capsule, outcome_keys: Sequence[str],
              carry: Sequence[str] = ()) -> tuple[list[str] | None, str]:
    """The command to run next, and why; `carry`: options the diff was run with, passed on."""
    if not outcome_keys:
        return None, "nothing that could change the outcome differs: there is nothing to bisect"
    if a.failed != b.failed:
        bad, good = (a, b) if a.failed else (b, a)
        argv = ["replay", "bisect", bad.provenance.path, "--good", good.provenance.path]
        why = "finds the smallest set of these differences that turns the passing run into the failing one"
        if _commit_is_what_differs(outcome_keys):
            argv.append("--commits")
            why = ("the commit is what differs: --commits walks the commits between the two and names the first "
                   "that fails as recorded")
        return _with_inputs(argv, (bad, good), outcome_keys, carry, why)
    both = "a failure" if a.failed else "a pass"
    return _with_inputs(["replay", a.provenance.path], (a,), outcome_keys, carry,
                        f"both record {both}, so bisect has no passing end: replay A to see whether it comes back")


def _commit_is_what_differs(keys: Sequence[str]) -> bool:
    """The commit differs, and nothing else could change the outcome but the source that goes with it."""
    return SOURCE_COMMIT in keys and all(k.startswith("source:") for k in keys)


def _with_inputs(argv: list[str], capsules: Sequence[Capsule], outcome_keys: Sequence[str], carry: Sequence[str],
                 why: str) -> tuple[list[str], str]:
    argv = [*argv, *carry]
    fill: list[str] = []
    options = {word.split("=", 1)[0] for word in carry}  # given as `--repo X` or `--repo=X` (as diff carries it)
    if "--repo" not in options and any(_needs_repo(c) for c in capsules):
        argv += ["--repo", REPO_PLACEHOLDER]
        fill.append(f"--repo {REPO_PLACEHOLDER}: a clone, fork, mirror or bundle that has the recorded commit "
                    "(a capsule records none that can be fetched)")
    given = {item.split("=", 1)[0] for flag, item in zip(carry, carry[1:]) if flag in ("--env", "-e")} | {
        word.split("=", 2)[1] for word in carry if word.startswith("--env=")}
    differing = {k.split(":", 1)[1] for k in outcome_keys if k.startswith("env:")}
    names = sorted({name for c in capsules for name, fact in c.env.items() if name in differing
                    and fact.state == "set" and fact.value is None and not fact.host_specific} - given)
    for name in names:
        argv += ["--env", f"{name}={VALUE_PLACEHOLDER}"]
    if names:
        fill.append(f"--env NAME={VALUE_PLACEHOLDER}: the value of {', '.join(names)} (recorded by name only)")
    return argv, why + ("; fill in " + "; ".join(fill) if fill else "")


def _needs_repo(c: Capsule) -> bool:
    """A recorded commit whose remote replay cannot fetch by itself (none, or a local path)."""
    repo = c.repo
    return repo is not None and repo.commit is not None and not (repo.remote and _NETWORK_URL.match(repo.remote))
