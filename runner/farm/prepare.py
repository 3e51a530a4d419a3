"""Before anything runs: each capsule verified, read and planned (at its commit, and at
--ref), or judged `broken` / `infra-error` on the spot with the reason."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__, secretrules
from ..build.plan import PlanOptions
from ..build.planner import make_plan
from ..capsules.model import Capsule
from ..capsules.opening import Opened, open_capsule
from ..capsules.trust import Trust
from ..replay import Expected, Replayer, expected_of
from ..verdict.vocabulary import FarmVerdict
from .ids import content_id
from .records import CapsuleResult
from .store import NightEntry
from .verdict import unjudged

if TYPE_CHECKING:
    from ..build.plan import Plan


@dataclass(frozen=True)
class Prepared:
    entry: NightEntry
    capsule: Capsule
    expected: Expected
    plan: Plan
    ref_plan: Plan | None  # None: no --ref, or nothing to judge at REF (no commit, a recorded pass)
    ref_problem: str = ""  # why REF could not be planned (the recorded-commit verdict stands)


Unprepared = tuple[FarmVerdict, str, "Capsule | None"]


def prepare(entry: NightEntry, replayer: Replayer, ref: str | None, repo: str | None,
            trust: Trust = Trust(), opened: Opened | Exception | None = None,
            fill: frozenset[str] = frozenset()) -> Prepared | Unprepared:
    """The plan from the one read of the capsule: `opened` when the night's collection opened it
    (or why it could not), else (a resumed night) opened now. A capsule the trust policy refuses
    (it does not verify; with --require-valid, no valid signature from a --trust-key) is
    `broken`, as replay refuses it."""
    path = Path(entry.path)
    capsule: Capsule | None = None
    try:
        if opened is None:
            if content_id(path) != entry.capsule_id:
                return "broken", "the capsule changed since this night began (resume replays what was collected)", None
            opened = open_capsule(path, trust.showing())
        if isinstance(opened, Exception):
            raise opened
        trust.admit(opened.name, opened.verified)
        capsule = opened.capsule
        has_commit = capsule.repo is not None and capsule.repo.commit is not None
        # --repo serves the capsules that record a commit; the others record no source to fetch
        env = replayer.options.secret_env  # the plan names them as supplied; their values reach the run only
        plan = make_plan(capsule, replayer.settings, PlanOptions(repo=repo if has_commit else None, env_overrides=env,
                                                                 fill_only=fill))
        expected = expected_of(capsule)
        if not (ref and has_commit and expected.failed):
            return Prepared(entry, capsule, expected, plan, None)
        try:
            return Prepared(entry, capsule, expected, plan, make_plan(capsule, replayer.settings,
                                                                      PlanOptions(repo=repo, ref=ref, env_overrides=env,
                                                                                  fill_only=fill)))
        except Exception as exc:
            return Prepared(entry, capsule, expected, plan, None, unjudged(exc)[1])
    except Exception as exc:
        verdict, reason = unjudged(exc)
        return verdict, reason, capsule


def now() -> str:
    """RFC 3339 UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def unjudged_result(night_id: str, entry: NightEntry, verdict: FarmVerdict, reason: str,
                    capsule: Capsule | None, ref: str | None = None, duration_s: float = 0.0) -> CapsuleResult:
    return CapsuleResult(
        night_id=night_id, capsule_id=entry.capsule_id, path=entry.path,
        format=capsule.provenance.format.value if capsule else entry.format,
        repo=_repo(capsule), commit=_commit(capsule), verdict=verdict, reason=secretrules.scrub(reason), ref=ref,
        recorded_signature=_recorded_signature(capsule), duration_s=duration_s, replay_version=__version__,
        finished_at=now(), also_at=entry.also_at)


def _repo(c: Capsule | None) -> str | None:
    """The recorded remote, without any user:password@ it carried (the history is shared)."""
    remote = c.repo.remote if c is not None and c.repo is not None else None
    return secretrules.mask_url(remote) if remote else None


def _commit(c: Capsule | None) -> str | None:
    return c.repo.commit if c is not None and c.repo is not None else None


def _recorded_signature(c: Capsule | None) -> str | None:
    if c is None:
        return None
    try:
        return expected_of(c).signature
    except Exception:
        return None
