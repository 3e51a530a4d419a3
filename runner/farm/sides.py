"""One capsule's night: its attempts at the recorded commit (K, more only while they disagree,
by the one stopping rule: verdict/sampling.py), then at --ref one at a time until the fix is
decided against that rate, each attempt recorded before it starts and when it ends."""
from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..replay import Attempt
from ..verdict.vocabulary import FarmVerdict, Verdict
from ..verdict.rate import Rate
from .executor import Done, Executor, ImageFailed, RemoteFailure, Work, attempt_ids, new_task_id, task_of
from .records import AttemptRecord, CapsuleResult, Night, Side
from .night_options import FarmOptions
from .prepare import Prepared, now, unjudged_result
from .store import HistoryStore
from .verdict import decide, kinds_of, ref_judgement, unjudged

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
        sampling = self.options.sampling
        at_ref = p.ref_plan is not None  # the night's rate is also REF's baseline: surer when it must be
        records = self._side(p, "recorded", p.plan,
                             lambda rs: sampling.series_batch(kinds_of(rs), baseline=at_ref))
        decision = decide(p.expected, records, sampling.confidence)
        reason = _reason(decision.verdict, decision.rate, p.expected.failed) + _why(p, decision.verdict, records,
                                                                                     self.options.repo)
        ref_v, ref_why = self._at_ref(p, decision.rate)
        asked_ref = p.ref_plan is not None or bool(p.ref_problem)
        base = unjudged_result(self.night.id, p.entry, decision.verdict, reason + ref_why, p.capsule,
                               self.options.ref if asked_ref else None, self._took())
        return dataclasses.replace(
            base, signature=decision.signature, signatures=decision.signatures, exit_code=decision.exit_code,
            key_lines=decision.key_lines, rate=decision.rate, ref_verdict=ref_v, image_digest=self._digest,
            recorded_signature=p.expected.signature, not_applied=not_applied(p.plan))

    def _at_ref(self, p: Prepared, baseline: Rate | None) -> tuple[Verdict | None, str]:
        """The verdict at REF and what to add to the reason; REF's own failure leaves the
        recorded-commit verdict standing (REF is then inconclusive). The recorded-commit rate just
        decided is the baseline: REF's attempts go one at a time until the one fix judgement is
        decided against it (a failure as recorded: not fixed; few enough that do not pass: fixed)
        or --max-attempts ends them; a failure that did not come back at its own commit cannot
        be fixed at REF (inconclusive, and no REF attempt runs)."""
        ref = self.options.ref or "REF"
        if p.ref_problem:
            return "inconclusive", f"; at {ref}: {p.ref_problem}"
        if p.ref_plan is None:
            return None, ""
        sampling = self.options.sampling

        def wanted(rs: Sequence[AttemptRecord]) -> int:
            return 0 if baseline is None or sampling.fix_next(baseline, kinds_of(rs)) is None else 1

        try:
            records = self._side(p, "ref", p.ref_plan, wanted) if wanted([]) else []
        except ImageFailed as exc:
            return "inconclusive", f"; at {ref}: {_unjudged(exc.cause)[1]}"
        fix = ref_judgement(p.expected, baseline, records, ref, sampling.confidence)
        return fix.verdict, f"; at {ref}: {fix.verdict}: {fix.why}"

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


def _reason(verdict: str, rate: Rate | None, failed: bool) -> str:
    if rate is None or verdict == "inconclusive":
        return "no attempt finished in time"
    return f"{rate.failed} of {rate.runs} attempts came back as recorded: " \
           f"{rate.phrase('fails' if failed else 'passes as recorded')}"


def _why(p: Prepared, verdict: Verdict, records: Sequence[AttemptRecord], repo: str | None) -> str:
    """The likeliest cause of a capsule that did not come back as recorded (replay/why.py), as the
    reason's last words; nothing when it did."""
    from ..replay.why import likeliest
    from .verdict import as_attempt

    rerun = ["replay", p.entry.path, *(["--repo", repo] if repo else [])]
    causes = likeliest(verdict, p.expected, [as_attempt(r) for r in records], p.plan.fidelity, None, rerun,
                       argv=p.plan.argv)
    return f"; likeliest cause: {causes[0].fact}: {causes[0].evidence}; try: {causes[0].next}" if causes else ""


def not_applied(plan: Plan) -> tuple[str, ...]:
    """The plan's fidelity rows that were not replayed exactly, one line each."""
    return tuple(f"{f.fact}: {f.status}" + (f" ({f.why})" if f.why else "")
                 for f in plan.fidelity if f.status != "exact")

