"""The CI replay job's summary: the verdict sentence of `replay farm run` and the fidelity
summary of the capsule's plan, as Markdown for `$GITHUB_STEP_SUMMARY` (or a GitLab job log).

The verdict is the farm run's (the replay of record: one capsule, its attempts); the
fidelity rows are what the planner says about the same capsule with the same --repo,
which is what that replay built. Nothing is replayed again.

    replay ci summary CAPSULE FARM_RUN_JSON [--repo PATH] [--out FILE]
"""
from __future__ import annotations

import json
from pathlib import Path

from ..build.plan import Fidelity
from ..errors import CapsuleError


def fidelity(capsule: Path, repo: str | None) -> tuple[Fidelity, ...]:
    """The replay's fidelity table for the capsule with the same --repo (replay/world.py's, so the
    summary counts as the replay did), with the base image's own glibc: nothing is built here."""
    from ..build.plan import PlanOptions
    from ..build.planner import make_plan
    from ..capsules import read_capsule
    from ..config import Settings
    from ..replay.world import replay_fidelity

    model = read_capsule(capsule)
    plan = make_plan(model, Settings(), PlanOptions(repo=repo))
    return replay_fidelity(plan, model.platform.libc_version, plan.base.libc_version)


def render(capsule: Path, farm_run: Path, repo: str | None) -> str:
    from ..report.summary import summary_markdown

    try:
        doc = json.loads(farm_run.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CapsuleError(farm_run, f"not a `replay farm run --json` result: {exc}") from exc
    results = (doc.get("result") or {}).get("results") or []
    error = "" if results else str((doc.get("error") or {}).get("message", "no result"))
    return summary_markdown(capsule.name, results, error, fidelity(capsule, repo))
