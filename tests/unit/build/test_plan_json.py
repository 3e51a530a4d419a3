"""A portable plan: Plan -> JSON -> Plan is exact, it holds no host path, and what a
build needs travels with it through the content store."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.config import Settings
from runner.build.sources.content import ContentStore
from runner.errors import CapsuleError, ReplayError
from runner.build.plan import content_refs
from runner.build.plancodec import plan_from_json, plan_to_json
from runner.build.plan import PlanOptions
from runner.build.planner import make_plan
from runner.build.render import write_context

from tests.examples import EXAMPLES, NOVA, ROOT

CAPSULES = sorted({*ROOT.glob("examples/*/capsule.json"), *EXAMPLES.glob("twin/*.json"),
                   *EXAMPLES.glob("codeinstances/*.json"), *(p for p in EXAMPLES.glob("novafabric/*") if p.is_dir()),
                   *ROOT.glob("tests/cases/*/*/capsule.json")})


def planned(path: Path, tmp_path: Path) -> object:
    try:
        capsule = read_capsule(path)
        return make_plan(capsule, Settings(), PlanOptions(source_dir=str(tmp_path) if "minimal" in str(path) else None))
    except ReplayError:
        return None  # a case folder of a capsule that must be refused


@pytest.mark.usefixtures("offline_registry")
@pytest.mark.parametrize("path", CAPSULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_capsule_plan_round_trips_through_json(path: Path, tmp_path: Path) -> None:
    plan = planned(path, tmp_path)
    if plan is None:  # only case folders of bad capsules may be refused
        assert "tests/cases/" in str(path), f"{path} does not plan"
        return
    text = json.dumps(plan_to_json(plan), sort_keys=True)
    again = plan_from_json(json.loads(text))
    assert again == plan
    assert json.dumps(plan_to_json(again), sort_keys=True) == text
    # no host path: neither the capsule's directory nor this machine's cache is named
    assert str(path.parent) not in text and str(Settings().cache_dir) not in text


def test_enough_capsules_plan_for_the_round_trip_to_mean_something(offline_registry: None, tmp_path: Path) -> None:
    assert sum(planned(p, tmp_path) is not None for p in CAPSULES) >= 8


def test_a_plan_read_back_is_validated_again() -> None:
    with pytest.raises(CapsuleError, match="not a replay.plan/1 document"):
        plan_from_json({"title": "x"})
    data = {"schema": "replay.plan/1", "title": "t", "capsule_id": "c", "argv": ["true"],
            "base": {"distro": "debian", "suite": "bookworm", "version": "12", "libc_version": "2.36", "python": "3.11"},
            "lock": {"manager": "npm", "path": "a\nRUN touch /pwned", "sha256": None}}
    with pytest.raises(CapsuleError, match="lockfile path"):
        plan_from_json(data, "sent.json")


def test_a_plan_builds_on_another_machine_from_its_content(offline_registry: None, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    here = Settings()
    plan = make_plan(read_capsule(NOVA), here)
    refs = content_refs(plan)
    assert {i.logical_path for i in plan.inputs} == {"poem.txt", "wordcount.py"} and refs
    shipped = ContentStore(here.cache_dir / "content").export(refs)
    # "another machine": a fresh cache, the plan as JSON and the exported content only
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "elsewhere"))
    there = Settings()
    ContentStore(there.cache_dir / "content").load(shipped)
    plan_there = plan_from_json(json.loads(json.dumps(plan_to_json(plan))))
    ctx = write_context(plan_there, there, tmp_path / "ctx")
    assert (ctx.path / "inputs" / "poem.txt").read_bytes() == (NOVA / "inputs" / "poem.txt").read_bytes()


def test_content_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    store = ContentStore(tmp_path)
    with pytest.raises(ReplayError, match="does not match its digest"):
        store.load({"0" * 64: "aGVsbG8="})
