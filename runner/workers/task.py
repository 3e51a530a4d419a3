"""What a worker does with one unit of work: build the image it lacks, run the attempts.

One `WorkerRuntime` per worker process (created after the fork: a docker client is not
shared across processes). Images are kept per planned image in the one build-once cache
(build/images.py), looked for again before each use (the engine may have lost one), and a
failed build is not remembered: the next task may find the mirror back. Every container of a task carries the label replay=task-<task id> and is named
after its attempt, so a redelivered task first removes what an earlier delivery (on a
worker that vanished) left running, and a time limit removes the running container.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..config import Settings, settings as load_settings
from ..build.sources.content import content_store
from ..engine import Engine
from ..farm.executor import Done, Work
from ..farm.verdict import unjudged
from ..build.plan import Plan
from ..replay import BuiltImage, Progress, Replayer, ReplayOptions
from .message import Failure, done_to_json, image_plan_of, work_from_json


def task_label(task_id: str) -> str:
    return f"task-{task_id}"


def container_name(attempt_id: str) -> str:
    return f"replay-attempt-{attempt_id}"


class WorkerRuntime:
    def __init__(self, settings: Settings | None = None, engine: Engine | None = None) -> None:
        self.settings = settings or load_settings()
        self._images = Replayer(ReplayOptions(label="worker-images", recheck_images=True), Progress(quiet=True),
                                self.settings, engine)

    @property
    def engine(self) -> Engine:
        return self._images.engine

    def handle(self, message: object, task_id: str) -> dict[str, object]:
        """The answer to one message (never raises for the capsule's or the work's own failures)."""
        store = content_store(self.settings.cache_dir)
        try:
            work = work_from_json(message, store)
        except Exception as exc:
            return done_to_json(None, Failure("image", *unjudged(exc)))
        if work.task_id != task_id:
            return done_to_json(None, Failure("image", "broken", "the message names another task"))
        try:
            image = self.image(image_plan_of(message, work))
        except Exception as exc:
            return done_to_json(None, Failure("image", *unjudged(exc)))
        try:
            return done_to_json(self.run(work, image))
        except Exception as exc:
            return done_to_json(None, Failure("run", *unjudged(exc)))

    def image(self, plan: Plan) -> BuiltImage:
        """This machine's image of the plan: built once per planned image, rebuilt if it went."""
        return self._images.image(plan)

    def run(self, work: Work, image: BuiltImage, on_start: Callable[[str], None] | None = None) -> Done:
        label = task_label(work.task_id)
        self.engine.cleanup(label)  # what an earlier delivery of this task left behind
        options = ReplayOptions(attempts=1, timeout=work.timeout, memory=work.memory, label=label)
        replayer = Replayer(options, Progress(quiet=True), self.settings, self.engine)
        out = []
        try:
            with replayer.world(work.plan) as world:
                for aid in work.attempt_ids:
                    self.engine.stop(container_name(aid))  # an orphan of this very attempt
                    spec = dataclasses.replace(replayer.run_spec(work.plan, image, world.attempt()),
                                               name=container_name(aid))
                    if on_start is not None:
                        on_start(aid)
                    out.append((aid, replayer.run_one(work.expected, spec)))
        finally:
            replayer.close()  # the containers and networks of this task, a time limit's included
        return Done(tuple(out), self._digest(image), image.built)

    def _digest(self, image: BuiltImage) -> str | None:
        try:
            return self.engine.image_id(image.ref)
        except Exception:
            return None

    def close(self) -> None:
        self._images.close()
