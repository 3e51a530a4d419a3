"""The executor seam: what a night sends, what it records of the answers, how a resumed
coordinator collects instead of re-sending, and the unit of work as JSON.

A scripted executor stands in for the machines (fault injection: a late duplicate,
an answer missing an attempt, a worker's failure); the history is a real SQLite store.
"""
from __future__ import annotations

import base64
import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.config import Settings
from runner.build.sources.content import ContentStore
from runner.errors import CapsuleError, SourceUnavailable
from runner.farm.executor import Done, ImageFailed, RemoteFailure, Work, attempt_ids, task_of
from runner.farm.night_options import FarmOptions
from runner.farm.prepare import Prepared
from runner.farm.sides import CapsuleRunner
from runner.farm.store import NightEntry, SqlStore
from runner.verdict.judge import Attempt, Expected, expected_of
from runner.build.plan import Plan
from runner.build.planner import make_plan
from runner.workers.message import done_from_json, done_to_json, image_plan_of, work_from_json, work_to_json

from tests.unit.farm.builders import write_instance
from tests.unit.farm.records import attempt, night

OK = Attempt(0, None, "exit0:aaaa", ("hello",), 0.2, stdout=b"hello\n", classification="recorded")
OTHER = Attempt(1, None, "exit1:bbbb", ("Error: no",), 0.2, stdout=b"\xff\xfe", classification="other")


class Scripted:
    """An executor whose answers the test decides; it records every unit of work it got."""

    batch, resumable, together = 0, True, True

    def __init__(self, answer: list[Attempt] | Exception | None = None, extra: tuple[tuple[str, Attempt], ...] = ()):
        self.answer, self.extra = answer, extra
        self.sent: list[tuple[Work, bool]] = []

    def prebuild(self, plans: Sequence[Plan]) -> None: ...
    def ready(self, plan: Plan) -> None: ...

    def run(self, work: Work, resumed: bool = False) -> Done:
        self.sent.append((work, resumed))
        if isinstance(self.answer, Exception):
            raise self.answer
        atts = self.answer or [OK]
        return Done(tuple((aid, atts[i % len(atts)]) for i, aid in enumerate(work.attempt_ids)) + self.extra,
                    image_digest="sha256:feed", built=True)

    def images(self) -> int: return 1
    def builds(self) -> int: return 1
    def clear_leftovers(self) -> None: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


@pytest.fixture
def prepared(tmp_path: Path) -> Prepared:
    path = write_instance(tmp_path / "hello.json", ["python3", "-c", "print('hello')"], "hello\n")
    capsule = read_capsule(path)
    return Prepared(NightEntry("c1", str(path), "codeinstances"), capsule, expected_of(capsule),
                    make_plan(capsule, Settings()), None)


@pytest.fixture
def store(tmp_path: Path) -> SqlStore:
    s = SqlStore(tmp_path / "farm.sqlite")
    s.create_night(night("n1", "2026-12-01T00:00:00Z", None), {}, [NightEntry("c1", "caps/hello.json", "twin")])
    return s


def _runner(store: SqlStore, executor: Scripted) -> CapsuleRunner:
    return CapsuleRunner(store, executor, night("n1", "2026-12-01T00:00:00Z", None),  # type: ignore[arg-type]
                         FarmOptions(attempts=3, max_attempts=5), threading.Event())


def test_a_round_of_attempts_goes_as_one_task_whose_id_names_its_attempts(store: SqlStore,
                                                                          prepared: Prepared) -> None:
    ex = Scripted()
    result = _runner(store, ex).judge(prepared)
    assert result.verdict == "reproduced" and result.image_digest == "sha256:feed"
    (work, resumed), = ex.sent
    assert not resumed and len(work.attempt_ids) == 3
    assert {task_of(a) for a in work.attempt_ids} == {work.task_id}
    recs = store.attempts("n1", "c1", "recorded")
    assert [(r.id, r.state, r.index) for r in recs] == [(a, "finished", i + 1) for i, a in enumerate(work.attempt_ids)]


def test_attempts_that_disagree_get_one_more_round_up_to_the_maximum(store: SqlStore, prepared: Prepared) -> None:
    ex = Scripted([OK, OTHER])
    result = _runner(store, ex).judge(prepared)
    assert [len(w.attempt_ids) for w, _ in ex.sent] == [3, 2]  # K, then (they disagree) the fewest more that could decide, at most max - K
    assert len(store.attempts("n1", "c1", "recorded")) == 5 and result.rate is not None and result.rate.runs == 5


FAILS = Attempt(1, None, "exit1:aaaa", ("Error: boom",), 0.2, classification="recorded")
PASSES = Attempt(0, None, "exit0:bbbb", (), 0.2, classification="pass")


class BySide(Scripted):
    """The recorded commit's runs and REF's each from their own script, run by run (repeating)."""

    def __init__(self, recorded: list[Attempt], ref: list[Attempt]) -> None:
        super().__init__()
        self.scripts = {"recorded": recorded, "ref": ref}

    def run(self, work: Work, resumed: bool = False) -> Done:
        script = self.scripts[work.side]
        offset = sum(len(w.attempt_ids) for w, _ in self.sent if w.side == work.side)  # that side's runs so far
        self.sent.append((work, resumed))
        atts = [script[(offset + i) % len(script)] for i in range(len(work.attempt_ids))]
        return Done(tuple(zip(work.attempt_ids, atts)), image_digest="sha256:feed", built=True)


@pytest.mark.parametrize(("recorded", "ref", "verdict", "ref_runs"), [
    ([FAILS], [PASSES], "fixed", 5),  # 3/3 at the commit: five straight passes at REF decide
    ([FAILS], [PASSES, FAILS], "not-fixed", 2),  # the first failure as recorded decides
    ([FAILS, PASSES], [PASSES], "inconclusive", 10),  # flaky at the commit: 10 passes are not enough yet
    ([PASSES], [PASSES], "inconclusive", 0),  # never came back at its commit: no REF attempt
])
def test_ref_runs_one_at_a_time_until_the_fix_is_decided_against_the_nights_rate(
        store: SqlStore, prepared: Prepared, recorded: list[Attempt], ref: list[Attempt], verdict: str,
        ref_runs: int) -> None:
    failing = dataclasses.replace(prepared, expected=Expected(True, 1, None, "exit1:aaaa", ("Error: boom",)),
                                  ref_plan=prepared.plan)
    ex = BySide(recorded, ref)
    runner = CapsuleRunner(store, ex, night("n1", "2026-12-01T00:00:00Z", None),  # type: ignore[arg-type]
                           FarmOptions(attempts=3, max_attempts=10, ref="abc1234"), threading.Event())
    result = runner.judge(failing)
    assert result.ref_verdict == verdict, result.reason
    assert len(store.attempts("n1", "c1", "ref")) == ref_runs
    assert all(len(w.attempt_ids) == 1 for w, _ in ex.sent if w.side == "ref")
    assert f"at abc1234: {verdict}" in result.reason


def test_a_late_duplicate_or_a_missing_attempt_adds_no_record(store: SqlStore, prepared: Prepared) -> None:
    stray = (("someone-else-1", OTHER),)
    ex = Scripted(extra=stray)
    _runner(store, ex).judge(prepared)
    ids = [r.id for r in store.attempts("n1", "c1", "recorded")]
    assert "someone-else-1" not in ids and len(ids) == 3

    class Short(Scripted):
        def run(self, work: Work, resumed: bool = False) -> Done:
            done = super().run(work, resumed)
            return dataclasses.replace(done, attempts=done.attempts[:-1])  # one attempt lost on the way

    store.create_night(night("n2", "2026-12-02T00:00:00Z", None), {}, [])
    short = Short()
    runner = CapsuleRunner(store, short, night("n2", "2026-12-02T00:00:00Z", None),  # type: ignore[arg-type]
                           FarmOptions(attempts=3, max_attempts=3), threading.Event())
    with pytest.raises(RemoteFailure, match="lacks some of its attempts"):  # an infra-error, not a loop
        runner.judge(prepared)
    states = [r.state for r in store.attempts("n2", "c1", "recorded")]
    assert states == ["finished", "finished", "started"]  # the lost one never counts


def test_a_resumed_coordinator_collects_the_task_it_had_sent_and_sends_no_new_one(
        store: SqlStore, prepared: Prepared) -> None:
    task = "0123abcd" * 4
    for i, aid in enumerate(attempt_ids(task, 3), start=1):  # what the killed coordinator recorded, then sent
        store.start_attempt(dataclasses.replace(attempt("n1", "c1", i), id=aid))
    ex = Scripted()
    result = _runner(store, ex).judge(prepared)
    assert [(w.task_id, w.attempt_ids, resumed) for w, resumed in ex.sent] == [(task, attempt_ids(task, 3), True)]
    assert result.verdict == "reproduced" and result.rate is not None and result.rate.runs == 3


def test_a_local_attempt_left_started_by_a_kill_is_never_collected(store: SqlStore, prepared: Prepared) -> None:
    store.start_attempt(attempt("n1", "c1", 1))  # a plain uuid: a local attempt cut short
    ex = Scripted()
    _runner(store, ex).judge(prepared)
    assert [resumed for _, resumed in ex.sent] == [False] and len(ex.sent[0][0].attempt_ids) == 3


def test_a_workers_own_judgement_of_a_failure_is_the_capsules(store: SqlStore, prepared: Prepared) -> None:
    runner = _runner(store, Scripted(ImageFailed(RemoteFailure("broken", "lockfile hash mismatch"))))
    with pytest.raises(ImageFailed) as err:
        runner.judge(prepared)
    result = runner.unjudged(prepared, err.value)
    assert (result.verdict, result.reason) == ("broken", "lockfile hash mismatch")
    assert runner.unjudged(prepared, RemoteFailure("infra-error", "engine gone")).verdict == "infra-error"


# -- the unit of work as JSON ---------------------------------------------------------------------

def _work(plan: Plan, prepared: Prepared) -> Work:
    return Work("t1", "n1", "c1", "recorded", plan, prepared.expected, attempt_ids("t1", 2), 30.0, "1g")


def test_work_round_trips_with_its_content_checked_against_the_digests(tmp_path: Path, prepared: Prepared) -> None:
    here = ContentStore(tmp_path / "here")
    digest = here.put_bytes(b"an input file\n")
    from runner.build.plan import InputFile

    plan = dataclasses.replace(prepared.plan, inputs=(InputFile("data.txt", digest),))
    message = work_to_json(_work(plan, prepared), here)
    there = ContentStore(tmp_path / "there")
    back = work_from_json(message, there)
    assert back == _work(plan, prepared) and there.path(digest).read_bytes() == b"an input file\n"

    message["content"][digest] = base64.b64encode(b"something else").decode()
    with pytest.raises(SourceUnavailable, match="does not match its digest"):
        work_from_json(message, ContentStore(tmp_path / "elsewhere"))


def test_work_naming_containers_by_odd_attempt_ids_or_an_unplanned_plan_is_refused(
        tmp_path: Path, prepared: Prepared) -> None:
    store = ContentStore(tmp_path / "s")
    message = work_to_json(_work(prepared.plan, prepared), store)
    with pytest.raises(CapsuleError, match="attempt ids"):
        work_from_json({**message, "attempt_ids": ["../../etc"]}, store)
    with pytest.raises(CapsuleError, match="replay.work/1"):
        work_from_json({**message, "schema": "replay.work/9"}, store)
    other = dataclasses.replace(prepared.plan, locales=("de_DE.UTF-8",))  # another image
    with pytest.raises(CapsuleError, match="another image"):
        image_plan_of(work_to_json(_work(prepared.plan, prepared), store, other), _work(prepared.plan, prepared))
    same = dataclasses.replace(prepared.plan, argv=("python3", "-c", "print(2)"))  # same image, another command
    assert image_plan_of(work_to_json(_work(prepared.plan, prepared), store, same),
                         _work(prepared.plan, prepared)) == same


def test_answers_round_trip_bytes_and_failures(prepared: Prepared) -> None:
    done = Done((("t1-1", OK), ("t1-2", OTHER)), "sha256:feed", True)
    assert done_from_json(done_to_json(done)) == (done, None)
    from runner.workers.message import Failure

    failed = done_to_json(None, Failure("image", "infra-error", "mirror did not answer"))
    assert done_from_json(failed) == (Done(()), Failure("image", "infra-error", "mirror did not answer"))


def test_a_capsule_that_did_not_come_back_says_its_likeliest_cause(tmp_path: Path, store: SqlStore) -> None:
    """The farm shows the first of replay's causes (issue 30): here a variable recorded by name only."""
    from tests.examples import TZ_CAPSULE, json_variant

    capsule = read_capsule(json_variant(TZ_CAPSULE, tmp_path, lambda d: d["env"].update(APP_LANG={"state": "set"})))
    p = Prepared(NightEntry("c1", "caps/tz.json", "twin"), capsule, expected_of(capsule),
                 make_plan(capsule, Settings()), None)
    result = _runner(store, Scripted([PASSES])).judge(p)
    assert result.verdict == "not-reproduced"
    assert "; likeliest cause: env APP_LANG:" in result.reason and "--env 'APP_LANG=…'" in result.reason
