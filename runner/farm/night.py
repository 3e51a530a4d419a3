"""One night of the farm: collect, plan every capsule, build each distinct image once,
then run the attempts in parallel and record a verdict per capsule.

Everything a verdict rests on goes to the store as it happens (an attempt row before
the attempt starts, its outcome when it ends, the verdict last), so `--resume` after
a kill of any kind continues the same night: judged capsules are not redone and
finished attempts count once.
"""
from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..replay import Progress, Replayer, ReplayOptions
from .collect import Opening, collect
from .executor import Executor, LocalExecutor
from .night_options import FarmOptions
from ..build.images import image_key
from ..build.planner import fill_only
from .records import Night
from .prepare import Prepared, now, prepare, unjudged_result
from .night_progress import FarmProgress
from .sides import CapsuleRunner, Stopped
from .store import HistoryStore, NightEntry, StoreError


@dataclass(frozen=True)
class NightOutcome:
    night_id: str
    images: int  # distinct planned images
    builds: int  # images actually built


def new_night_id() -> str:
    # sortable, and safe as a docker label value and in file names
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


MakeExecutor = Callable[[FarmOptions, Replayer, FarmProgress], Executor]


def local_executor(options: FarmOptions, replayer: Replayer, progress: FarmProgress) -> Executor:
    """The attempts run here, on this machine's engine (the CLI hands in another maker for workers)."""
    if options.executor != "local":
        raise UsageError(f"farm run: this caller runs attempts here only, not with --executor {options.executor}")
    _ = replayer.engine  # no engine: one line, exit 3, and no night recorded
    replayer.images.on_build = progress.build  # the night says each build as it starts and ends
    return LocalExecutor(replayer, replayer.images)


def run_night(store: HistoryStore, sources: Sequence[Path], options: FarmOptions, progress: FarmProgress,
              resume: bool = False, env: tuple[tuple[str, str], ...] = (),
              make_executor: MakeExecutor = local_executor) -> tuple[NightOutcome, FarmOptions]:
    """``env``: the --env values, applied at run time to every capsule; only their names are stored
    (a resumed night asks for the same names again). ``make_executor``: where the attempts run,
    for the options of the night (a resumed one's are the stored ones); the caller makes it."""
    if resume:
        opened = store.open_night()
        if opened is None:
            raise UsageError("farm run --resume: no unfinished night to resume in this history")
        night, entries = opened.night, list(opened.entries)
        read: Mapping[str, Opening] = {}  # each capsule is opened again when it is prepared
        options = FarmOptions.from_stored(dict(opened.options))
        _same_names(options.supplied, env)
        progress.say(f"resuming night {night.id} (started {night.started_at})")
    else:
        collected = collect(sources, options.trust)
        entries, read = list(collected.entries), collected.opened
        if not entries:  # a mistyped path must not make a green night
            raise UsageError("farm run: no capsule found in " + ", ".join(map(str, sources)) +
                             "; no night recorded")
        night = Night(id=new_night_id(), started_at=now(), ref=options.ref, sources=tuple(map(str, sources)))
    replayer = Replayer(ReplayOptions(attempts=1, timeout=options.timeout, memory=options.memory,
                                      label=f"farm-{night.id}", secret_env=env), Progress(quiet=True))
    executor: Executor | None = None
    try:
        executor = make_executor(options, replayer, progress)  # nothing to run on: exit 3, no night
        if resume:
            executor.clear_leftovers()  # what a killed run left behind
        else:
            store.create_night(night, options.stored(), entries)
            progress.say(f"night {night.id}: {len(entries)} capsule(s)")
        outcome = _Night(store, replayer, executor, night, options, progress).run(entries, read)
    finally:
        if executor is not None:
            executor.close()
        replayer.close()
    return outcome, options


def _same_names(stored: tuple[str, ...], env: tuple[tuple[str, str], ...]) -> None:
    given = tuple(name for name, _ in env)
    if sorted(set(given)) != sorted(set(stored)):
        want = " ".join(f"--env {n}=..." for n in stored) or "no --env"
        raise UsageError(f"farm run --resume: this night began with {want} (values are never stored): give the same again")


class _Night:
    def __init__(self, store: HistoryStore, replayer: Replayer, executor: Executor, night: Night,
                 options: FarmOptions, progress: FarmProgress) -> None:
        self.store, self.replayer, self.night, self.options, self.progress = store, replayer, night, options, progress
        self.executor = executor
        self.stop = threading.Event()
        self._running: list[Future[None]] = []

    def run(self, entries: list[NightEntry], read: Mapping[str, Opening]) -> NightOutcome:
        judged = self.store.judged(self.night.id)
        todo = [e for e in entries if e.capsule_id not in judged]
        pool = ThreadPoolExecutor(self.options.workers, thread_name_prefix="farm")
        try:
            self.progress.start(len(entries), len(judged))
            prepared = self._prepare(pool, todo, read)
            self.progress.planned_images(len({image_key(p.plan) for p in prepared}))
            self._wait([self._submit(pool, self._build, p) for p in _first_of_each(prepared)])
            order = _grouped if self.executor.together else _interleaved
            self._wait([self._submit(pool, self._judge, p) for p in order(prepared)])
        except BaseException:
            # Ctrl-C, SIGTERM or a store failure: workers record nothing more (their attempt rows
            # stay "started"), and their containers go now, so no worker waits on one to end
            self.stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            self._drain()
            raise
        pool.shutdown()
        images, builds = self.executor.images(), self.executor.builds()
        self.store.finish_night(self.night.id, now(), images, builds)
        return NightOutcome(self.night.id, images, builds)

    def _submit(self, pool: ThreadPoolExecutor, fn: Any, p: Prepared) -> Future[None]:
        fut = pool.submit(fn, p)
        self._running.append(fut)
        return fut

    def _drain(self, limit_s: float = 60.0) -> None:
        """Remove this night's containers until every worker has returned: one may be
        between recording its attempt and creating the container when the stop comes."""
        deadline = time.monotonic() + limit_s
        pending = [f for f in self._running if not f.done()]
        while pending and time.monotonic() < deadline:
            self.executor.interrupt()
            wait(pending, timeout=0.3)
            pending = [f for f in pending if not f.done()]
        self.executor.close()

    def _wait(self, futures: list[Future[Any]]) -> None:
        for fut in futures:
            fut.result()  # a store failure stops the night (it could not be recorded anyway)

    def _prepare(self, pool: ThreadPoolExecutor, todo: list[NightEntry], read: Mapping[str, Opening]) -> list[Prepared]:
        """Plan every capsule first, from its one read; the ones that cannot be planned are judged now."""
        out: list[Prepared] = []
        trust = self.options.trust
        # a value supplied for a variable some capsule recorded by name only fills it in where it was set:
        # the night's capsules that recorded it absent keep it absent (build/planner.fill_only)
        fill = fill_only((o.capsule for o in read.values() if not isinstance(o, Exception)),
                         self.replayer.options.secret_env)
        for entry, fut in [(e, pool.submit(prepare, e, self.replayer, self.options.ref, self.options.repo, trust,
                                           read.get(e.capsule_id), fill)) for e in todo]:
            ready = fut.result()
            if isinstance(ready, Prepared):
                out.append(ready)
            else:
                result = unjudged_result(self.night.id, entry, *ready)
                self.store.add_result(result)
                self.progress.capsule_done(result, replayed=False)
        return out

    def _build(self, p: Prepared) -> None:
        self.executor.prebuild([p.plan])  # a failure is remembered: each member of the group is judged by it

    def _judge(self, p: Prepared) -> None:
        if self.stop.is_set():
            return
        runner = CapsuleRunner(self.store, self.executor, self.night, self.options, self.stop)
        try:
            result = runner.judge(p)
        except Stopped:
            return
        except StoreError:
            raise  # the history cannot be written: the night stops (resumable)
        except Exception as exc:
            if self.stop.is_set():
                return
            result = runner.unjudged(p, exc)
        self.store.add_result(result)
        self.progress.capsule_done(result)


def _first_of_each(prepared: list[Prepared]) -> list[Prepared]:
    seen: dict[str, Prepared] = {}
    for p in prepared:
        seen.setdefault(image_key(p.plan), p)
    return list(seen.values())


def _grouped(prepared: list[Prepared]) -> list[Prepared]:
    """Capsules sharing a planned image one after another: the worker that built it likely gets the next."""
    first: dict[str, int] = {}
    for i, p in enumerate(prepared):
        first.setdefault(image_key(p.plan), i)
    return sorted(prepared, key=lambda p: first[image_key(p.plan)])


def _interleaved(prepared: list[Prepared]) -> list[Prepared]:
    """Groups taken in turn, so parallel workers start on different images first."""
    groups: dict[str, list[Prepared]] = {}
    for p in prepared:
        groups.setdefault(image_key(p.plan), []).append(p)
    out: list[Prepared] = []
    lists = list(groups.values())
    for i in range(max((len(g) for g in lists), default=0)):
        out.extend(g[i] for g in lists if i < len(g))
    return out
