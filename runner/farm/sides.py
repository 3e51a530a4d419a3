"""One capsule's night: its attempts at the recorded commit (K, more only where they
disagree), then at --ref, each attempt recorded before it starts and when it ends."""
from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..replay import Attempt
from ..verdict.facts import REPRODUCES, FarmVerdict, Verdict
from .executor import Done, Executor, ImageFailed, RemoteFailure, Work, attempt_ids, new_task_id, task_of
from .model import AttemptRecord, CapsuleResult, Night, Rate, Side
from .options import FarmOptions
from .prepare import Prepared, now, unjudged_result
from .store import HistoryStore
from .verdict import decide, more_attempts, ref_attempts_wanted, ref_done, ref_judgement, unjudged

if TYPE_CHECKING:
    from ..build.plan import Plan


class Stopped(Exception):
    """The night is being interrupted: record nothing more."""


class CapsuleRunner:
    def __init__(self, store: HistoryStore, executor: Executor, night: Night,
                 options: FarmOptions, stop: threading.Event) -> None:
        self.store, self.executor, self.night = store, executor, night
        self.options, self.stop = options, stop
        self._start = time.monotonic()
        self._digest: str | None = None  # of the recorded-commit image, as the executor saw it

    def judge(self, p: Prepared) -> CapsuleResult:
        k, most = self.options.attempts, self.options.max_attempts
        records = self._side(p, "recorded", p.plan,
                             lambda rs: more_attempts([r.classification for r in rs], k, most))
        decision = decide(p.expected, records)
        reason = _reason(decision.verdict, decision.rate)
        ref_v, ref_why = self._at_ref(p, decision.verdict)
        asked_ref = p.ref_plan is not None or bool(p.ref_problem)
        base = unjudged_result(self.night.id, p.entry, decision.verdict, reason + ref_why, p.capsule,
                               self.options.ref if asked_ref else None, self._took())
        return dataclasses.replace(
            base, signature=decision.signature, exit_code=decision.exit_code, key_lines=decision.key_lines,
            rate=decision.rate, ref_verdict=ref_v, image_digest=self._digest,
            recorded_signature=p.expected.signature)

    def _at_ref(self, p: Prepared, recorded: Verdict) -> tuple[Verdict | None, str]:
        """The verdict at REF and what to add to the reason; REF's own failure leaves the
        recorded-commit verdict standing (REF is then inconclusive). The recorded-commit
        verdict just decided is the baseline: a failure that does not come back at its own
        commit cannot be fixed at REF (judge_fix says inconclusive, and no REF attempt runs)."""
        if p.ref_problem:
            return "inconclusive", f"; at {self.options.ref}: {p.ref_problem}"
        if p.ref_plan is None:
            return None, ""
        if recorded not in REPRODUCES:
            fix = ref_judgement(p.expected, recorded, ())
            return fix.verdict, f"; at {self.options.ref}: {fix.verdict}: {fix.why}"
        wanted = ref_attempts_wanted(recorded, self.options.attempts, self.options.max_attempts)
        try:
            records = self._side(p, "ref", p.ref_plan, lambda rs: 0 if ref_done(rs, wanted) else 1)
        except ImageFailed as exc:
            return "inconclusive", f"; at {self.options.ref}: {_unjudged(exc.cause)[1]}"
        fix = ref_judgement(p.expected, recorded, records)
        return fix.verdict, f"; at {self.options.ref}: {fix.verdict}: {fix.why}"

    def unjudged(self, p: Prepared, exc: BaseException) -> CapsuleResult:
        verdict, reason = _unjudged(exc.cause if isinstance(exc, ImageFailed) else exc)
        return unjudged_result(self.night.id, p.entry, verdict, reason, p.capsule, None, self._took())

    def _side(self, p: Prepared, side: Side, plan: Plan,
              wanted: Callable[[Sequence[AttemptRecord]], int]) -> list[AttemptRecord]:
        """Finished attempts of earlier sessions count; one left `started` by a kill does not
        (it has no outcome) and its index is not reused -- unless the executor can still
        collect it (remote work keeps running while its coordinator is down)."""
        self.executor.ready(plan)  # an image that cannot be had fails here, before any attempt is recorded
        known = self.store.attempts(self.night.id, p.entry.capsule_id, side)
        records = [r for r in known if r.state == "finished"]
        index = max((r.index for r in known), default=0)
        if self.executor.resumable:
            for started in _unfinished_tasks(known).values():
                records += self._send(p, side, plan, started, resumed=True)
        while (n := wanted(records)) > 0:
            if self.stop.is_set():
                raise Stopped
            task = new_task_id()
            ids = attempt_ids(task, min(n, self.executor.batch or n)) if self.executor.resumable \
                else (uuid.uuid4().hex,)
            started = []
            for aid in ids:
                index += 1
                rec = AttemptRecord(id=aid, night_id=self.night.id, capsule_id=p.entry.capsule_id,
                                    side=side, index=index, state="started", started_at=now())
                self.store.start_attempt(rec)
                started.append(rec)
            records += self._send(p, side, plan, started, task_id=task)
        return records

    def _send(self, p: Prepared, side: Side, plan: Plan, started: list[AttemptRecord], task_id: str = "",
              resumed: bool = False) -> list[AttemptRecord]:
        """Run (or, resumed, collect) one unit of work and record each attempt's outcome once."""
        work = Work(task_id or task_of(started[0].id) or started[0].id, self.night.id, p.entry.capsule_id, side,
                    plan, p.expected, tuple(r.id for r in started), self.options.timeout, self.options.memory)
        done: Done = self.executor.run(work, resumed=resumed)
        if self.stop.is_set():
            raise Stopped  # an attempt cut short by the interruption is no outcome
        if side == "recorded" and done.image_digest:
            self._digest = done.image_digest
        outcomes = dict(done.attempts)  # by id: an attempt the work did not ask for is no record
        finished = []
        for rec in started:
            att = outcomes.get(rec.id)
            if att is not None:
                rec = _finished(rec, att, now())
                self.store.finish_attempt(rec)
                finished.append(rec)
        if len(finished) < len(started):  # it stays started and never counts; asking again could loop
            raise RemoteFailure("infra-error", f"the answer to task {work.task_id[:12]} lacks some of its attempts")
        return finished

    def _took(self) -> float:
        return round(time.monotonic() - self._start, 3)


def _unfinished_tasks(known: Sequence[AttemptRecord]) -> dict[str, list[AttemptRecord]]:
    """Attempts a killed coordinator left `started`, by the task they were sent in."""
    out: dict[str, list[AttemptRecord]] = {}
    for r in known:
        task = task_of(r.id)
        if r.state == "started" and task is not None:
            out.setdefault(task, []).append(r)
    return out


def _unjudged(exc: BaseException) -> tuple[FarmVerdict, str]:
    """A worker already judged its own failure; anything else as the farm always has."""
    if isinstance(exc, RemoteFailure):
        return exc.verdict, exc.reason
    return unjudged(exc)


def _finished(rec: AttemptRecord, att: Attempt, at: str) -> AttemptRecord:
    return dataclasses.replace(rec, state="finished", finished_at=at, exit_code=att.exit_code, signal=att.signal,
                               signature=att.signature, classification=att.classification,
                               duration_s=round(att.duration_s, 3), timed_out=att.timed_out,
                               key_lines=tuple(att.key_lines))


def _reason(verdict: str, rate: Rate | None) -> str:
    if rate is None or verdict == "inconclusive":
        return "no attempt finished in time"
    said = f"{rate.k} of {rate.n} attempts came back as recorded"
    return f"{said} (95 % interval {rate.low:.0%}-{rate.high:.0%})" if verdict == "flaky" else said

