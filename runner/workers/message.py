"""A unit of work and its answer as JSON: what travels through the broker.

The work carries the portable plan (`replay.plan/1`, checked again by the worker as
any plan from elsewhere) with the content-store entries its build reads, what the
attempts are judged against, and the attempts' ids. No secret travels: the farm takes
no `--env` values, and a broker URL is never part of a message. The answer carries
each attempt's record by its id, or why the work could not be done.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..codec import decode, encode
from ..config import Settings, settings as load_settings
from ..build.sources.content import ContentStore
from ..build.sources.repo import ship_tree
from ..errors import CapsuleError
from ..farm.executor import Done, Work
from ..farm.records import FarmVerdict
from ..verdict.judge import Attempt, Expected
from ..build.plan import Plan, content_refs
from ..build.plancodec import plan_from_json, plan_to_json

WORK_SCHEMA = "replay.work/1"
DONE_SCHEMA = "replay.done/1"


@dataclass(frozen=True)
class Failure:
    """Work a worker could not do, judged there (broken or infra-error) with why; at `image`
    the plan's image could not be had, at `run` an attempt could not be run."""

    stage: str  # image | run
    verdict: FarmVerdict
    reason: str


def work_to_json(work: Work, store: ContentStore, image_plan: Plan | None = None,
                 settings: Settings | None = None) -> dict[str, Any]:
    """`image_plan`: the plan the image is built from when it is another member of the group
    (the same image by construction: only run-time fields differ). A source this machine
    reads from a local mirror (or a local --repo) travels as its tree (`sources`)."""
    other = image_plan if image_plan is not None and image_plan != work.plan else None
    refs = content_refs(work.plan) | (content_refs(other) if other else set())
    sources = _shipped(tuple(p for p in (work.plan, other) if p is not None), store, settings or load_settings())
    refs |= {s["tree"] for s in sources}
    return {"schema": WORK_SCHEMA, "task_id": work.task_id, "night_id": work.night_id,
            "capsule_id": work.capsule_id, "side": work.side, "plan": plan_to_json(work.plan),
            "image_plan": plan_to_json(other) if other else None,
            "content": store.export(refs), "sources": sources, "expected": encode(work.expected),
            "attempt_ids": list(work.attempt_ids), "timeout": work.timeout, "memory": work.memory}


def _shipped(plans: tuple[Plan, ...], store: ContentStore, settings: Settings) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for plan in plans:
        src = plan.source
        tree = ship_tree(src, settings, store) if src is not None else None
        if src is not None and tree is not None and src.remote and src.commit:
            entry = {"remote": src.remote, "commit": src.commit, "tree": tree}
            if entry not in out:
                out.append(entry)
    return out


def _register_sources(data: dict[str, Any], store: ContentStore, plans: tuple[Plan, ...]) -> None:
    """The shipped trees, named after the sources they are (only the work's own plans' sources)."""
    wanted = {(p.source.remote, p.source.commit) for p in plans if p.source is not None}
    for entry in data.get("sources") or ():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("remote", "commit", "tree")):
            raise CapsuleError("task", "a shipped source must name its remote, commit and tree")
        if (entry["remote"], entry["commit"]) not in wanted:
            raise CapsuleError("task", "a shipped source is not the source of the work's plan")
        store.put_source(entry["remote"], entry["commit"], entry["tree"])  # the tree came in `content`, checked


def image_plan_of(data: Any, work: Work) -> Plan:
    """The plan to build the work's image from (checked: it must plan the same image)."""
    from ..build.images import image_key

    raw = data.get("image_plan") if isinstance(data, dict) else None
    if not raw:
        return work.plan
    other = plan_from_json(raw, "task image plan")
    if image_key(other) != image_key(work.plan):
        raise CapsuleError("task", "the image plan plans another image than the work's plan")
    return other


def work_from_json(data: Any, store: ContentStore) -> Work:
    """The work, its plan validated and its content loaded (checked against the digests)."""
    if not isinstance(data, dict) or data.get("schema") != WORK_SCHEMA:
        raise CapsuleError("task", f"not a {WORK_SCHEMA} message")
    plan = plan_from_json(data.get("plan"), "task plan")
    store.load(data.get("content") or {})
    image = plan_from_json(data["image_plan"], "task image plan") if data.get("image_plan") else plan
    _register_sources(data, store, (plan, image))
    ids = tuple(str(i) for i in data.get("attempt_ids") or ())
    if not ids or any(not i.replace("-", "").isalnum() for i in ids):
        raise CapsuleError("task", "attempt ids must be letters, digits and '-'")  # they name containers
    return Work(task_id=str(data["task_id"]), night_id=str(data["night_id"]), capsule_id=str(data["capsule_id"]),
                side="ref" if data.get("side") == "ref" else "recorded",
                plan=plan, expected=decode(Expected, data["expected"], "expected"), attempt_ids=ids,
                timeout=float(data["timeout"]), memory=str(data["memory"]))


def done_to_json(done: Done | None, failure: Failure | None = None) -> dict[str, Any]:
    return {"schema": DONE_SCHEMA,
            "attempts": [{"id": aid, "attempt": encode(att)} for aid, att in (done.attempts if done else ())],
            "image_digest": done.image_digest if done else None, "built": bool(done and done.built),
            "failure": encode(failure) if failure else None}


def done_from_json(data: Any) -> tuple[Done, Failure | None]:
    if not isinstance(data, dict) or data.get("schema") != DONE_SCHEMA:
        raise ValueError(f"not a {DONE_SCHEMA} answer")
    atts = tuple((str(a["id"]), decode(Attempt, a["attempt"], "attempt")) for a in data["attempts"])
    failure = decode(Failure, data["failure"], "failure") if data.get("failure") else None
    return Done(atts, data.get("image_digest"), bool(data.get("built"))), failure
