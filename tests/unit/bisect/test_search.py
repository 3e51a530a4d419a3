"""The pure search: ddmin over fact keys with fake test functions, deterministic and seeded."""
from __future__ import annotations

import math
import random
import threading
import time
from collections import Counter
from collections.abc import Iterable

import pytest

from runner.bisect.rules import Rules
from runner.bisect.search import BisectResult, Candidate, result_data, search, spread, together
from runner.bisect.splits import SINGLETONS_UP_TO
from runner.bisect.trial import Observation, Trial
from runner.verdict.judge import trial_verdict


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
        self.made: set[frozenset[str]] = set()
        self.image_calls: Counter[frozenset[str]] = Counter()
        self.lock = threading.Lock()
        self.delay = delay

    def image(self, keys: frozenset[str]) -> str:
        with self.lock:
            self.image_calls[keys] += 1
        time.sleep(self.delay)  # lets racing threads meet
        return f"img{sorted(keys)}"

    def __call__(self, keys: tuple[str, ...], runs: int = 1) -> Observation:
        applied = frozenset(keys)
        with self.lock:
            self.calls.append(applied)
        build = frozenset(k for k in keys if self.stages.get(k) == "build")
        with self.lock:
            first = build not in self.made
            self.made.add(build)
        if first:
            self.image(build)
        if any(c <= applied for c in self.culprits):
            return Observation("reproduced", "exit1:recorded", built=first, build_s=1.0 if first else 0.0,
                               attempts=("recorded",))
        if any(c <= applied for c in self.others):
            return Observation("different-failure", "exit2:other", built=first, attempts=("other",) * runs)
        return Observation("not-reproduced", built=first, attempts=("pass",) * runs)


def fake_for(cands: list[Candidate], *culprits: Iterable[str], **kw: object) -> Fake:
    return Fake(*culprits, stages={c.key: c.stage for c in cands}, **kw)  # type: ignore[arg-type]


def bound(n: int) -> int:
    return 2 * math.ceil(math.log2(n)) + 2


def searched(result: BisectResult) -> list[Trial]:
    """The trials of the search itself (not the ends' rate or the answer's check)."""
    return [t for t in result.trials if t.role == "search"]


def sets_tried(result: BisectResult) -> int:
    """Distinct sets of facts run, both ends included: what ddmin's bound counts."""
    return len({t.keys for t in result.trials})


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
        assert sets_tried(result) <= bound(n), (culprit.key, [t.keys for t in result.trials])
        tried = [t.keys for t in searched(result)]
        assert len(tried) == len(set(tried))  # a deterministic failure: each set is decided by one visit


def test_the_bound_holds_for_every_size_and_mix() -> None:
    for n in range(1, 21):
        for r in range(n + 1):
            cands = candidates(r, n - r)
            for culprit in cands:
                result = search(cands, fake_for(cands, [culprit.key]))
                assert result.minimal == (culprit.key,)
                assert sets_tried(result) <= max(2, bound(n)), (n, r, culprit.key)


def test_single_culprit_among_one() -> None:
    cands = candidates(0, 1)
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert result.minimal == ("pin:node:b00",)
    assert {t.role for t in result.trials} == {"good end", "bad end"}  # the ends' runs are the whole search


def test_the_confirmation_shows_the_rate_higher_first_when_that_costs_fewer_runs() -> None:
    # one fact: its removal is the good end. After the bad end's two failures the removal would need
    # 7 passes in all; a third failure brings that down to 5: 8 runs, not 9
    cands = candidates(1)
    result = search(cands, fake_for(cands, ["env:R0"]))
    assert (result.status, result.minimal) == ("found", ("env:R0",))
    runs = {keys: [a for t in result.trials if t.keys == keys for a in t.attempts] for keys in ((), ("env:R0",))}
    assert runs == {(): ["pass"] * 5, ("env:R0",): ["recorded"] * 3}, runs
    assert result.confidence >= 0.95


def test_ends_are_the_first_two_trials() -> None:
    cands = candidates(3, 3)
    result = search(cands, fake_for(cands, ["env:R1"]))
    good, bad = result.trials[:2]
    assert (good.role, good.keys, good.verdict) == ("good end", (), "not-reproduced")
    assert (bad.role, set(bad.keys), bad.verdict) == ("bad end", {c.key for c in cands}, "reproduced")
    assert all(t.role == "search" for t in result.trials if t.keys not in ((), bad.keys))


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
    bad = [k for t in result.trials if t.role == "bad end" for k in t.attempts]
    # until a failure that comes back in 1 run of 5 would have shown at the confidence
    assert bad == ["pass"] * Rules().give_up_after() == ["pass"] * 14
    assert "bad environment does not fail the recorded way" in result.notes[0]
    assert "in 14 run(s) it fails in at most 22 % of runs (95 %)" in result.notes[0]


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
    assert any("without env:R0" in n and "failed another way" in n for n in result.notes)


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
    assert set(searched(result)[0].keys) == {"env:R0", "env:R1", "env:R2"}


def test_halves_stay_balanced_when_the_stage_split_would_cost_a_level() -> None:
    cands = candidates(3, 5)  # 3 | 5 would need a fourth level for 8 facts
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert set(searched(result)[0].keys) == {"env:R0", "env:R1", "env:R2", "pin:node:b00"}


def test_a_mixed_set_with_a_small_run_time_part_is_cut_in_three() -> None:
    cands = candidates(4, 2)  # the TZ bisect's shape: CI, LANG, NODE_ENV, TZ | npm, node
    for jobs in (1, 2):
        fake = fake_for(cands, ["env:R3"])
        result = search(cands, fake, jobs=jobs)
        assert result.minimal == ("env:R3",)
        # both run-time halves (together, with two jobs), then the culprit's half one fact at a time
        assert [set(t.keys) for t in searched(result)] == [{"env:R0", "env:R1"}, {"env:R2", "env:R3"},
                                                           {"env:R2"}, {"env:R3"}]
    build = search(cands, fake_for(cands, ["pin:node:b01"]))
    assert [set(t.keys) for t in searched(build)[:2]] == [{"env:R0", "env:R1"}, {"env:R2", "env:R3"}]
    assert build.minimal == ("pin:node:b01",) and sets_tried(build) <= bound(6)


def test_three_parts_only_where_the_bound_holds() -> None:
    cands = candidates(4, 4)  # three parts, then halving four build facts, would pass the bound of 8
    result = search(cands, fake_for(cands, ["pin:node:b00"]))
    assert set(searched(result)[0].keys) == {"env:R0", "env:R1", "env:R2", "env:R3"}


def test_small_run_time_sets_go_one_fact_at_a_time() -> None:
    cands = candidates(SINGLETONS_UP_TO, 0)
    result = search(cands, fake_for(cands, [cands[-1].key]))
    assert [len(t.keys) for t in searched(result)] == [1] * SINGLETONS_UP_TO
    assert sets_tried(result) <= bound(SINGLETONS_UP_TO)


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

    def slow(keys: tuple[str, ...], runs: int) -> Observation:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        if "env:R5" in keys:
            return Observation("reproduced", attempts=("recorded",))
        return Observation("not-reproduced", attempts=("pass",) * runs)

    result = search(cands, slow, jobs=3)
    assert result.minimal == ("env:R5",)
    assert peak[0] == 3


# --- a failure that comes back only some of the time (seeded stand-ins) -------------------


class Flaky:
    """Sets holding all of `culprit` fail the recorded way with probability `rate`, from a seeded
    generator: the same runs every time the test runs."""

    def __init__(self, culprit: Iterable[str], rate: float, seed: int) -> None:
        self.culprit, self.rate, self.rng = frozenset(culprit), rate, random.Random(seed)
        self.runs = 0

    def __call__(self, keys: tuple[str, ...], runs: int) -> Observation:
        kinds: list = []
        for _ in range(runs):
            self.runs += 1
            kinds.append("recorded" if self.culprit <= set(keys) and self.rng.random() < self.rate else "pass")
            if kinds[-1] == "recorded":
                break
        return Observation(trial_verdict(kinds), "exit1:recorded" if "recorded" in kinds else None,
                           attempts=tuple(kinds))


@pytest.mark.parametrize("seed", range(5))
def test_a_flaky_culprit_is_found_with_its_confidence(seed: int) -> None:
    cands = candidates(5, 1)  # the shape: CI, LANG, NODE_ENV, TZ, a by-name variable | node
    fake = Flaky(["env:R3"], 0.5, seed)
    result = search(cands, fake)
    assert (result.status, result.minimal) == ("found", ("env:R3",)), (result.notes, result.removals)
    assert result.confidence >= 0.95 and result.target == 0.95
    (removal,) = result.removals
    assert (removal.key, removal.failed) == ("env:R3", 0) and removal.luck <= 0.05
    assert result.confidence == pytest.approx(1 - removal.luck, abs=1e-4)
    assert result.rate is not None and result.rate.failed >= 1
    assert fake.runs == sum(len(t.attempts) for t in result.trials)


class Scripted:
    """Each set's runs as a script, "r" recorded and "p" pass (then passes once it is spent)."""

    def __init__(self, scripts: dict[frozenset[str], str]) -> None:
        self.scripts = {k: list(v) for k, v in scripts.items()}

    def __call__(self, keys: tuple[str, ...], runs: int) -> Observation:
        kinds: list = []
        script = self.scripts.setdefault(frozenset(keys), [])
        for _ in range(runs):
            kinds.append("recorded" if script and script.pop(0) == "r" else "pass")
            if kinds[-1] == "recorded":
                break
        return Observation(trial_verdict(kinds), attempts=tuple(kinds))


def test_the_confirmation_rejects_a_set_with_a_decoy() -> None:
    # env:R1 is the culprit and fails every time, but its first run alone passed by luck: ddmin,
    # believing the failure deterministic, answers {R0, R1}; removing the decoy R0 must pass even for
    # a failure that only looked deterministic, so {R1} runs again, fails, and the search goes on from it
    cands = candidates(2, 0)
    r0, r1, both = frozenset({"env:R0"}), frozenset({"env:R1"}), frozenset({"env:R0", "env:R1"})
    fake = Scripted({both: "rrrrr", r1: "prrrr", r0: "", frozenset(): ""})
    result = search(cands, fake)
    assert (result.status, result.minimal) == ("found", ("env:R1",))
    alone = [t.attempts for t in result.trials if frozenset(t.keys) == r1]
    assert alone[0] == ("pass",) and alone[1][-1] == "recorded"  # taken for a pass, then shown to fail
    assert result.removals[0].key == "env:R1" and result.confidence >= 0.95


def test_without_the_confirmation_the_decoy_set_is_what_ddmin_gives() -> None:
    # the same runs, with --attempts 1: one run a set, as asked; the answer cannot be confirmed
    cands = candidates(2, 0)
    r1, both = frozenset({"env:R1"}), frozenset({"env:R0", "env:R1"})
    result = search(cands, Scripted({both: "rrrrr", r1: "prrrr"}), rules=Rules(per_trial=1))
    assert result.status == "undecided" and set(result.minimal) == {"env:R0", "env:R1"}
    assert result.confidence < 0.95


def test_the_budget_ends_a_flaky_search_undecided_with_what_is_known() -> None:
    cands = candidates(5, 1)
    result = search(cands, Flaky(["env:R3"], 0.3, 11), rules=Rules(max_runs=12))
    assert result.status == "undecided"
    assert sum(len(t.attempts) for t in result.trials) <= 12
    assert result.minimal and "env:R3" in result.minimal  # the smallest set seen failing so far
    assert any("run budget (12 runs) is spent" in n for n in result.notes)


def test_a_time_budget_ends_the_search() -> None:
    cands = candidates(5, 1)
    ticks = iter(range(10_000))
    result = search(cands, Flaky(["env:R3"], 0.5, 3), rules=Rules(seconds=5), clock=lambda: float(next(ticks)))
    assert result.status == "undecided"
    assert any("time budget (5 s) is spent" in n for n in result.notes)


def test_a_trial_of_nothing_is_inconclusive() -> None:
    assert trial_verdict([]) == "inconclusive"


def test_result_data_is_json_ready() -> None:
    cands = candidates(2, 2)
    data = result_data(search(cands, fake_for(cands, ["pin:node:b01"], others=[["env:R0"]])))
    assert data["status"] == "found"
    assert data["minimal"] == ["pin:node:b01"]
    assert data["candidates"][0] == {"key": "env:R0", "stage": "run", "cost": 1, "good": "good", "bad": "bad"}
    assert data["trials"][0]["role"] == "good end"
    assert all(isinstance(n, int) for n in data["also_failing"]) and data["also_failing"]
    assert data["variant_builds"] >= 1
    assert data["confidence"] >= 0.95 and data["target"] == 0.95
    assert data["rate"]["failed"] >= 1 and data["removals"][0]["key"] == "pin:node:b01"


def test_a_sets_runs_go_side_by_side_on_the_jobs_a_batch_leaves_idle() -> None:
    one, two = frozenset({"env:R0"}), frozenset({"env:R1"})
    assert spread([(one, 3)], 2) == [(one, 2), (one, 1)]  # a confirmation's three passes: two trials together
    assert spread([(one, 3), (two, 1)], 2) == [(one, 3), (two, 1)]  # no job idle
    assert spread([(one, 5), (two, 2)], 4) == [(one, 2), (one, 1), (one, 2), (two, 2)]  # the most runs split first
    assert spread([(one, 1)], 2) == [(one, 1)]  # one run: nothing to spread


def test_the_confirmations_runs_go_together_with_two_jobs() -> None:
    fakes = Fake({"env:R2"}), Fake({"env:R2"})
    alone, together = (search(candidates(run=4), fake, jobs=j) for j, fake in zip((1, 2), fakes))
    assert alone.minimal == together.minimal == ("env:R2",)
    assert [f.calls.count(frozenset()) for f in fakes] == [2, 3]  # the confirmation: two calls side by side
    runs = [sum(len(t.attempts) for t in r.trials if t.role == "good end") for r in (alone, together)]
    assert runs[0] == runs[1] > 2  # as many runs of the good end (its confirmation) ...
    good = [[t for t in r.trials if t.role == "good end"] for r in (alone, together)]
    assert len(good[0]) == len(good[1]) == 2  # ... in as many trials: one set's runs side by side are one


def test_runs_side_by_side_of_one_set_are_one_trial() -> None:
    one = frozenset({"env:R0"})
    passed, failed = Observation("not-reproduced", attempts=("pass",), run_s=1.0), \
        Observation("reproduced", "exit1:x", attempts=("pass", "recorded"), run_s=2.0)
    ((b, obs, role),) = together([(one, 1), (one, 2)], [passed, failed], ["search", "search"])
    assert (b, role) == ((one, 3), "search")
    assert (obs.verdict, obs.signature, obs.attempts, obs.run_s) == ("reproduced", "exit1:x", ("pass", "pass",
                                                                                                "recorded"), 3.0)
    assert len(together([(one, 1), (one, 1)], [passed, passed], ["good end", "search"])) == 2
