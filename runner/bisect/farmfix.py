"""`replay farm run --ref COMMIT --find-fix`: for each capsule the night found fixed at REF, the fix
bisection (fixes.py) from its recorded commit to REF, so that the report names the fixing commit,
as syzbot's and ClusterFuzz's fix bisection do. The farm calls `fixes_at_ref` after its night;
each capsule is bisected here, one after the other (each bisect runs its trials in parallel)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import ReplayError
from .commits import Commit, git_history
from .fixes import find_fix
from .trial import BisectSettings, cores
from .walk import WalkStatus


class FixedHere(Protocol):
    """What the farm's result of one capsule says (farm/records.py CapsuleResult)."""

    @property
    def capsule_id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def ref_verdict(self) -> str | None: ...


@dataclass(frozen=True)
class FoundFix:
    """One capsule's fix bisection, as the farm's report lists it."""

    capsule_id: str
    path: str
    status: WalkStatus | None  # None: the bisect could not run (`why` says what stopped it)
    fixing: Commit | None  # found at the confidence
    probability: float
    why: str


def fixes_at_ref(results: Iterable[FixedHere], ref: str, values: Mapping[str, Any],
                 say: Callable[[str], None]) -> list[FoundFix]:
    """The fixing commit of every capsule `fixed` at `ref`. `values`: the farm run's options (--repo,
    --mirror, --env, --timeout, --confidence, --trust-key...): each bisect replays as the night did."""
    from ..build.plan import PlanOptions
    from ..replay import Progress, Replayer, ReplayOptions
    from ..replay.inputs import parse_env, trust
    from ..replay.loading import Loader

    supplied = parse_env(values.get("env") or [])
    timeout = {"timeout": values["timeout"]} if values.get("timeout") else {}
    options = ReplayOptions(plan=PlanOptions(repo=values.get("repo"), env_overrides=supplied), secret_env=supplied,
                            trust=trust(values), **timeout)
    settings = BisectSettings(jobs=cores(), confidence=values.get("confidence") or 0.95)
    found = []
    for r in (r for r in results if r.ref_verdict == "fixed"):
        say(f"{r.path}: fixed at {ref[:12]}; finding the commit that fixed it")
        replayer = Replayer(options, Progress(None))
        try:
            result = find_fix(Loader(options), replayer, Path(r.path), ref, settings, Progress(None), git_history)
            why = result.walk.notes[-1] if not result.found and result.walk.notes else ""
            found.append(FoundFix(r.capsule_id, r.path, result.walk.status, result.fixing, result.walk.confidence,
                                  why))
        except ReplayError as e:
            found.append(FoundFix(r.capsule_id, r.path, None, None, 0.0, e.line()))
        finally:
            replayer.close()
    return found


def fixes_said(fixes: Iterable[FoundFix]) -> list[str]:
    """One line a capsule: `capsules/a.json: fixed by 4f2a1c9d0b7e round start of day down (≥ 0.99)`."""
    from .walk import chance_said

    lines = []
    for f in fixes:
        if f.fixing is not None:
            lines.append(f"{f.path}: fixed by {f.fixing.sha[:12]} {f.fixing.subject} ({chance_said(f.probability)})")
        else:
            lines.append(f"{f.path}: fixing commit not found ({f.status or 'not bisected'}: {f.why})")
    return lines
