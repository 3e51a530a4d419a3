"""What a worker does with one unit of work (runner/workers/task.py), on a fake engine: the attempts
run under the task's label and its attempts' names, the image built once and again when the engine
lost it, a build failure and a message for another task answered, never raised; and the broker's
URL rules (keys.py)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from runner.build.sources.content import ContentStore
from runner.build.planner import make_plan
from runner.capsules import read_capsule
from runner.config import Settings
from runner.engine import BuildEvent, RunResult, RunSpec
from runner.errors import BuildFailed
from runner.farm.executor import Work, attempt_ids
from runner.verdict.judge import expected_of
from runner.secretrules import mask_url
from runner.workers.taskkeys import check_broker_url
from runner.workers.message import done_from_json, work_to_json
from runner.workers.task import WorkerRuntime, container_name, task_label
from tests.unit.fake_engine import FakeEngine
from tests.unit.farm.builders import write_instance


@pytest.fixture
def work(tmp_path: Path) -> tuple[Work, dict[str, object]]:
    capsule = read_capsule(write_instance(tmp_path / "hello.json", ["python3", "-c", "print('hello')"], "hello\n"))
    plan = make_plan(capsule, Settings(cache_dir=tmp_path / "cache"))
    w = Work("t1", "n1", "c1", "recorded", plan, expected_of(capsule), attempt_ids("t1", 2), 30.0, "1g")
    return w, work_to_json(w, ContentStore(tmp_path / "cache" / "content"))


def runtime(tmp_path: Path, engine: FakeEngine) -> WorkerRuntime:
    return WorkerRuntime(Settings(cache_dir=tmp_path / "cache"), engine)


def hello(spec: RunSpec) -> RunResult:
    if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
        return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
    return RunResult(0, b"hello\n", b"hello\n", 0.1)


def test_a_task_runs_its_attempts_under_its_label_and_names(tmp_path: Path, work: tuple[Work, dict[str, object]],
                                                            offline_registry: object) -> None:
    w, message = work
    engine = FakeEngine(run=hello, images=["replay-base/debian:bookworm"])
    done, failure = done_from_json(runtime(tmp_path, engine).handle(message, "t1"))
    assert failure is None and [aid for aid, _ in done.attempts] == list(w.attempt_ids)
    assert {a.classification for _, a in done.attempts} == {"recorded"}
    ran = [s for s in engine.runs if s.argv[:2] != ("sh", "-c")]
    assert [s.name for s in ran] == [container_name(a) for a in w.attempt_ids]
    assert all(("replay", task_label("t1")) in s.labels for s in ran)
    assert len(engine.builds) == 1


def test_the_image_is_built_once_and_again_when_the_engine_lost_it(
        tmp_path: Path, work: tuple[Work, dict[str, object]], offline_registry: object) -> None:
    _, message = work
    engine = FakeEngine(run=hello, images=["replay-base/debian:bookworm"])
    rt = runtime(tmp_path, engine)
    rt.handle(message, "t1")
    rt.handle(message, "t1")
    assert len(engine.builds) == 1  # the second task found it
    engine.images.discard(engine.builds[0])  # pruned under the worker
    rt.handle(message, "t1")
    assert len(engine.builds) == 2


def test_failures_are_answers_never_raised(tmp_path: Path, work: tuple[Work, dict[str, object]],
                                           offline_registry: object) -> None:
    _, message = work

    def broken(ctx: Path, tag: str, labels: Mapping[str, str]) -> Iterator[BuildEvent]:
        raise BuildFailed("the mirror did not answer")
        yield  # a generator

    engine = FakeEngine(build=broken, run=hello, images=["replay-base/debian:bookworm"])
    _, failure = done_from_json(runtime(tmp_path, engine).handle(message, "t1"))
    assert failure is not None and (failure.stage, failure.verdict) == ("image", "infra-error")
    _, failure = done_from_json(runtime(tmp_path, engine).handle(message, "another"))
    assert failure is not None and (failure.verdict, failure.reason) == ("broken", "the message names another task")
    _, failure = done_from_json(runtime(tmp_path, engine).handle({"schema": "nonsense"}, "t1"))
    assert failure is not None and failure.verdict == "broken"


def test_the_broker_is_redis_and_shown_without_its_password() -> None:
    assert check_broker_url("redis://:pw@queue:6379/0") == "redis://:pw@queue:6379/0"
    with pytest.raises(ValueError, match="redis:// or rediss://") as err:
        check_broker_url("amqp://guest:hunter2@rabbit//")
    assert "hunter2" not in str(err.value)
    assert "hunter2" not in mask_url("rediss://user:hunter2@queue:6380/1")
