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
from typing import Any

from ..errors import CapsuleError

_CODE = str.maketrans({"`": "'", "|": "/", "\n": " ", "\r": " "})


def _cell(text: Any) -> str:
    """A table cell that no capsule value can break out of."""
    return f"`{str(text).translate(_CODE)}`" if text not in (None, "") else "-"


def sentence(result: dict[str, Any]) -> str:
    verdict = str(result.get("verdict", "inconclusive"))
    reason = str(result.get("reason") or "").strip().rstrip(".")
    said = f"**{verdict.upper()}**: {reason}." if reason else f"**{verdict.upper()}**."
    if result.get("signature"):
        said += f" Signature {_cell(result['signature'])}"
        if result.get("recorded_signature"):
            said += f" (recorded {_cell(result['recorded_signature'])})"
        said += "."
    return said


def fidelity_lines(capsule: Path, repo: str | None) -> list[str]:
    from ..build.planner import PlanOptions, make_plan
    from ..capsules import read_capsule
    from ..config import Settings

    plan = make_plan(read_capsule(capsule), Settings(), PlanOptions(repo=repo))
    rows = plan.fidelity
    exact = [f for f in rows if f.status == "exact"]
    lines = [f"{len(exact)} of {len(rows)} recorded facts replayed exactly."]
    from ..report.text import NAME_ONLY

    name_only = [f.fact.removeprefix("env ") for f in rows if f.recorded == NAME_ONLY and f.fact.startswith("env ")]
    others = [f for f in rows if f.status != "exact" and f.recorded != NAME_ONLY]
    if name_only:
        shown = ", ".join(name_only[:8]) + (f" and {len(name_only) - 8} more" if len(name_only) > 8 else "")
        lines.append(f"{len(name_only)} variable(s) recorded by name only, left unset: {shown.translate(_CODE)}.")
    if others:
        lines += ["", "| fact | recorded | replayed | status | why |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {_cell(f.fact)} | {_cell(f.recorded)} | {_cell(f.replayed)} | {f.status} | {_cell(f.why)} |"
                  for f in others[:50]]
        if len(others) > 50:
            lines.append(f"\n… and {len(others) - 50} more (replay --all lists them).")
    return lines


def render(capsule: Path, farm_run: Path, repo: str | None) -> str:
    try:
        doc = json.loads(farm_run.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CapsuleError(farm_run, f"not a `replay farm run --json` result: {exc}") from exc
    results = (doc.get("result") or {}).get("results") or []
    lines = [f"### replay: {_cell(capsule.name)}", ""]
    if not results:
        error = (doc.get("error") or {}).get("message", "no result")
        lines.append(f"**NOT JUDGED**: {str(error).translate(_CODE)}.")
    for result in results:
        lines.append(sentence(result))
    lines += ["", "#### Fidelity", ""] + fidelity_lines(capsule, repo)
    return "\n".join(lines) + "\n"
