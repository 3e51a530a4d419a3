"""The pure search: ddmin over fact keys with fake test functions."""
from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable

import pytest

from runner.bisect.search import SINGLETONS_UP_TO, Candidate, result_data, search
from runner.bisect.trial import Observation
from runner.bisect.trial import Once, Run, repeat
from runner.verdict.judge import Classification, trial_verdict


def candidates(run: int = 0, build: int = 0) -> list[Candidate]:
    """`run` run-time facts (env:R0...) and `build` build-time ones (pin:node:b0...)."""
    out = [Candidate(f"env:R{i}", "run", 1, "good", "bad") for i in range(run)]
    costs = (10, 20, 30, 40, 50, 100)
    out += [Candidate(f"pin:node:b{i:02d}", "build", costs[i % len(costs)], "1.0", "2.0") for i in range(build)]
    return out


class Fake:
    """A test function failing the recorded way when any culprit set is applied."""

    def __init__(self, *culprits: Iterable[str], others: Iterable[Iterable[str]] = (),
                 stages: dict[str, str] | None = None, delay: float = 0.0) -> None:
        self.culprits = [frozenset(c) for c in culprits]
        self.others = [frozenset(c) for c in others]
        self.calls: list[frozenset[str]] = []
        self.stages = stages or {}
        self.images: Once[frozenset[str], str] = Once()
        self.image_calls: Counter[frozenset[str]] = Counter()
        self.lock = threading.Lock()
        self.delay = delay

    def image(self, keys: frozenset[str]) -> str:
        with self.lock:
            self.image_calls[keys] += 1
        time.sleep(self.delay)  # lets racing threads meet
        return f"img{sorted(keys)}"

    def __call__(self, keys: tuple[str, ...]) -> Observation:
        applied = frozenset(keys)
        with self.lock:
            self.calls.append(applied)
        build = frozenset(k for k in keys if self.stages.get(k) == "build")
        _, first = self.images.get(build, lambda: self.image(build))
        if any(c <= applied for c in self.culprits):
            return Observation("reproduced", "exit1:recorded", built=first, build_s=1.0 if first else 0.0)
        if any(c <= applied for c in self.others):
            return Observation("different-failure", "exit2:other", built=first)
        return Observation("not-reproduced", built=first)


def fake_for(cands: list[Candidate], *culprits: Iterable[str], **kw: object) -> Fake:
    return Fake(*culprits, stages={c.key: c.stage for c in cands}, **kw)  # type: ignore[arg-type]


def bound(n: int) -> int:
    return 2 * math.ceil(math.log2(n)) + 2


@pytest.mark.parametrize("n", [6, 8, 16])
@pytest.mark.parametrize("runs", ["all run", "all build", "half"])
def test_single_culprit_within_the_trial_bound(n: int, runs: str) -> None:
    r = {"all run": n, "all build": 0, "half": n // 2}[runs]
    cands = candidates(r, n - r)
    for culprit in cands:
        fake = fake_for(cands, [culprit.key])
        result = search(cands, fake)
        assert result.status == "found"
        assert result.minimal == (culprit.key,)
        assert len(result.trials) <= bound(n), (culprit.key, [t.keys for t in result.trials])
        assert len(fake.calls) == len(set(fake.calls)) == len(result.trials)  # memoised: each subset once


def test_the_bound_holds_for_every_size_and_mix() -> None:
    for n in range(1, 21):
        for r in range(n + 1):
            cands = candidates(r, n - r)
            for culprit in cands:
                result = search(cands, fake_for(cands, [culprit.key]))
                assert result.minimal == (culprit.key,)
                assert len(result.trials) <= max(2, bound(n)), (n, r, culprit.key)


def test_single_culprit_among_one() -> None:
    cands = candidates(0, 1)
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert result.minimal == ("pin:node:b00",)
    assert [t.role for t in result.trials] == ["good end", "bad end"]


def test_ends_are_the_first_two_trials() -> None:
    cands = candidates(3, 3)
    result = search(cands, fake_for(cands, ["env:R1"]))
    good, bad = result.trials[:2]
    assert (good.role, good.keys, good.verdict) == ("good end", (), "not-reproduced")
    assert (bad.role, set(bad.keys), bad.verdict) == ("bad end", {c.key for c in cands}, "reproduced")
    assert all(t.role == "search" for t in result.trials[2:])


def test_two_fact_interaction() -> None:
    cands = candidates(4, 4)
    fake = fake_for(cands, ["env:R1", "pin:node:b02"])
    result = search(cands, fake)
    assert result.status == "found"
    assert set(result.minimal) == {"env:R1", "pin:node:b02"}
    assert any("interaction" in n for n in result.notes)
    by_keys = {frozenset(t.keys): t for t in result.trials}
    assert by_keys[frozenset(result.minimal)].verdict == "reproduced"
    for key in result.minimal:  # 1-minimal: without any one member it passes
        assert by_keys[frozenset(result.minimal) - {key}].verdict == "not-reproduced"


def test_three_fact_interaction() -> None:
    cands = candidates(5, 7)
    culprit = {"env:R0", "env:R4", "pin:node:b05"}
    result = search(cands, fake_for(cands, culprit))
    assert set(result.minimal) == culprit
    by_keys = {frozenset(t.keys): t for t in result.trials}
    for key in culprit:
        assert by_keys[frozenset(culprit - {key})].verdict == "not-reproduced"


def test_two_independent_culprits_give_one_of_them() -> None:
    cands = candidates(4, 4)
    result = search(cands, fake_for(cands, ["env:R0"], ["pin:node:b03"]))
    assert result.minimal in (("env:R0",), ("pin:node:b03",))


def test_no_candidates_and_the_failure_stays_is_no_culprit() -> None:
    fake = Fake([])  # fails whatever is applied, even nothing
    result = search([], fake)
    assert result.status == "no culprit"
    assert result.minimal == ()
    assert [(t.role, t.verdict) for t in result.trials] == [("both ends", "reproduced")]
    assert "not varied" in result.notes[0]


def test_no_candidates_and_no_failure_is_not_reproduced() -> None:
    result = search([], Fake())
    assert result.status == "not-reproduced"
    assert len(result.trials) == 1


def test_baseline_fails() -> None:
    cands = candidates(3, 3)
    result = search(cands, Fake([]))  # the empty set fails: the good end fails here
    assert result.status == "baseline fails"
    assert result.minimal == ()
    assert len(result.trials) == 2
    assert "good environment does not pass" in result.notes[0]


def test_good_end_failing_another_way_is_baseline_fails_too() -> None:
    cands = candidates(2, 0)
    result = search(cands, Fake(["env:R0"], others=[[]]))
    assert result.status == "baseline fails"
    assert [t.number for t in result.also_failing] == [1]


def test_not_reproduced_when_the_bad_end_passes() -> None:
    cands = candidates(3, 3)
    result = search(cands, fake_for(cands, ["not-a-candidate"]))
    assert result.status == "not-reproduced"
    assert len(result.trials) == 2
    assert "bad environment does not fail the recorded way" in result.notes[0]


def test_trials_failing_another_way_are_reported_separately() -> None:
    cands = candidates(4, 4)
    fake = fake_for(cands, ["pin:node:b01"], others=[["env:R0"]])
    result = search(cands, fake)
    assert result.minimal == ("pin:node:b01",)
    assert result.also_failing
    assert all(t.verdict == "different-failure" and t.signature == "exit2:other" for t in result.also_failing)
    assert all("env:R0" in t.keys and "pin:node:b01" not in t.keys for t in result.also_failing)
    assert [t.number for t in result.also_failing] == [t.number for t in result.trials if t.verdict == "different-failure"]


def test_removal_that_fails_another_way_is_noted() -> None:
    cands = candidates(2, 0)
    result = search(cands, Fake(["env:R0", "env:R1"], others=[["env:R1"]]))
    assert set(result.minimal) == {"env:R0", "env:R1"}
    assert any("without env:R0" in n and "exit2:other" in n for n in result.notes)


def test_all_run_time_differences_build_nothing() -> None:
    cands = candidates(8, 0)
    fake = fake_for(cands, ["env:R5"])
    result = search(cands, fake, jobs=4)
    assert result.minimal == ("env:R5",)
    assert fake.image_calls == Counter({frozenset(): 1})  # the good image only
    assert result.variant_builds == 0


def test_run_time_culprit_among_mixed_builds_nothing() -> None:
    cands = candidates(4, 4)
    for jobs in (1, 4):  # never a build on speculation behind a cheap trial
        fake = fake_for(cands, ["env:R2"])
        result = search(cands, fake, jobs=jobs)
        assert result.minimal == ("env:R2",)
        assert set(fake.image_calls) == {frozenset(), frozenset(c.key for c in cands[4:])}  # the two ends
        assert result.variant_builds == 1  # the bad end's image: needed to check that end


def test_the_all_run_time_subset_is_tried_first() -> None:
    cands = candidates(3, 3)
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert set(result.trials[2].keys) == {"env:R0", "env:R1", "env:R2"}


def test_halves_stay_balanced_when_the_stage_split_would_cost_a_level() -> None:
    cands = candidates(3, 5)  # 3 | 5 would need a fourth level for 8 facts
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert set(result.trials[2].keys) == {"env:R0", "env:R1", "env:R2", "pin:node:b00"}


def test_a_mixed_set_with_a_small_run_time_part_is_cut_in_three() -> None:
    cands = candidates(4, 2)  # the TZ bisect's shape: CI, LANG, NODE_ENV, TZ | npm, node
    for jobs in (1, 2):
        fake = fake_for(cands, ["env:R3"])
        result = search(cands, fake, jobs=jobs)
        assert result.minimal == ("env:R3",)
        # both run-time halves (together, with two jobs), then the culprit's half one fact at a time
        assert [set(t.keys) for t in result.trials[2:]] == [{"env:R0", "env:R1"}, {"env:R2", "env:R3"},
                                                           {"env:R2"}, {"env:R3"}]
    build = search(cands, fake_for(cands, ["pin:node:b01"]))
    assert [set(t.keys) for t in build.trials[2:4]] == [{"env:R0", "env:R1"}, {"env:R2", "env:R3"}]
    assert build.minimal == ("pin:node:b01",) and len(build.trials) <= bound(6)


def test_three_parts_only_where_the_bound_holds() -> None:
    cands = candidates(4, 4)  # three parts, then halving four build facts, would pass the bound of 8
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert set(result.trials[2].keys) == {"env:R0", "env:R1", "env:R2", "env:R3"}


def test_small_run_time_sets_go_one_fact_at_a_time() -> None:
    cands = candidates(SINGLETONS_UP_TO, 0)
    result = search(cands, fake_for(cands, [cands[-1].key]))
    assert [len(t.keys) for t in result.trials[2:]] == [1] * SINGLETONS_UP_TO
    assert len(result.trials) <= bound(SINGLETONS_UP_TO)


def test_each_image_is_built_once() -> None:
    cands = candidates(3, 9)
    for jobs in (1, 3, 8):
        fake = fake_for(cands, ["env:R1", "pin:node:b04"], ["pin:node:b07", "pin:node:b08"], delay=0.005)
        result = search(cands, fake, jobs=jobs)
        assert max(fake.image_calls.values()) == 1
        assert set(fake.image_calls) == {frozenset(t.image_keys) for t in result.trials}
        assert sum(t.built for t in result.trials) == len(fake.image_calls)


@pytest.mark.parametrize("culprits", [
    [["env:R3"]], [["pin:node:b05"]], [["env:R0", "pin:node:b01"]],
    [["env:R1", "env:R2", "pin:node:b06"]], [["env:R2"], ["pin:node:b00"]],
])
def test_jobs_give_the_same_answer(culprits: list[list[str]]) -> None:
    cands = candidates(5, 7)
    one = search(cands, fake_for(cands, *culprits), jobs=1)
    for jobs in (2, 3, 8):
        many = search(cands, fake_for(cands, *culprits), jobs=jobs)
        assert many.minimal == one.minimal
        assert many.status == one.status


def test_jobs_run_trials_at_the_same_time() -> None:
    cands = candidates(6, 0)
    active, peak, lock = [0], [0], threading.Lock()

    def slow(keys: tuple[str, ...]) -> Observation:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return Observation("reproduced" if "env:R5" in keys else "not-reproduced")

    result = search(cands, slow, jobs=3)
    assert result.minimal == ("env:R5",)
    assert peak[0] == 3


# --- attempts --------------------------------------------------------------------------


def flaky(pattern: str) -> Callable[[], Run]:
    """Attempts in this order: r = recorded, p = pass, o = other, t = timed out."""
    names: dict[str, Classification] = {"r": "recorded", "p": "pass", "o": "other", "t": "inconclusive"}
    it = iter(pattern)
    return lambda: (lambda v: Run(names[v], None if v == "p" else f"sig-{v}", 1.0))(next(it))


@pytest.mark.parametrize(("pattern", "attempts", "verdict", "ran"), [
    ("ppp", 3, "not-reproduced", 3), ("ppr", 3, "reproduced", 3), ("rpp", 3, "reproduced", 1),
    ("pop", 3, "different-failure", 3), ("ptp", 3, "inconclusive", 3), ("por", 3, "reproduced", 3),
    ("ppr", 1, "not-reproduced", 1),
])
def test_repeat(pattern: str, attempts: int, verdict: str, ran: int) -> None:
    obs = repeat(flaky(pattern), attempts)
    assert obs.verdict == verdict
    assert len(obs.attempts) == ran
    assert obs.run_s == float(ran)
    letter = {"reproduced": "r", "different-failure": "o", "inconclusive": "t"}.get(verdict)
    assert obs.signature == (None if letter is None else f"sig-{letter}")


def test_a_trial_of_nothing_is_inconclusive() -> None:
    assert trial_verdict([]) == "inconclusive"


def test_flaky_culprit_found_only_with_attempts() -> None:
    cands = candidates(4, 0)

    def make(attempts: int) -> Callable[[tuple[str, ...]], Observation]:
        def test(keys: tuple[str, ...]) -> Observation:
            # the culprit fails the recorded way on the third attempt only
            return repeat(flaky("ppr" if "env:R2" in keys else "ppp"), attempts)
        return test

    assert search(cands, make(1)).status == "not-reproduced"
    result = search(cands, make(3))
    assert result.minimal == ("env:R2",)
    assert result.trials[1].attempts == ("pass", "pass", "recorded")


def test_once_makes_each_value_once_across_threads() -> None:
    once: Once[str, int] = Once()
    made: list[str] = []

    def make() -> int:
        made.append("x")
        time.sleep(0.02)
        return 42

    results: list[tuple[int, bool]] = []
    threads = [threading.Thread(target=lambda: results.append(once.get("k", make))) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == ["x"]
    assert sorted(results) == [(42, False)] * 4 + [(42, True)]


def test_once_remembers_a_failure() -> None:
    once: Once[str, int] = Once()
    calls = []

    def boom() -> int:
        calls.append(1)
        raise ValueError("no")

    for _ in range(2):
        with pytest.raises(ValueError):
            once.get("k", boom)
    assert calls == [1]


def test_result_data_is_json_ready() -> None:
    cands = candidates(2, 2)
    data = result_data(search(cands, fake_for(cands, ["pin:node:b01"], others=[["env:R0"]])))
    assert data["status"] == "found"
    assert data["minimal"] == ["pin:node:b01"]
    assert data["candidates"][0] == {"key": "env:R0", "stage": "run", "cost": 1, "good": "good", "bad": "bad"}
    assert data["trials"][0]["role"] == "good end"
    assert all(isinstance(n, int) for n in data["also_failing"]) and data["also_failing"]
    assert data["variant_builds"] >= 1
