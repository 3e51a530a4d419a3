"""The typed results of the commands that replay (run, bisect, farm run / report / history): each
holds what its stage returned and says its exit code, its --json result, its text view and its
JSON Schema (outputs.py says what a result is)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Exit
from ..schemas.derive import BOOL, INT, NUM, STR, Derive, array, nullable, obj
from .outputs import Answer, Screen

if TYPE_CHECKING:
    from ..bisect import BisectResult, CommitsResult, SweepResult
    from ..bisect.farmfix import FoundFix
    from ..bisect.fixes import FixResult
    from ..farm.attention import Attention
    from ..farm.records import CapsuleResult, Night
    from ..pinning.pinsearch import PinResult
    from ..outcome.runreport import Kept
    from ..outcome.runreport import ReplayReport


def _kept_line(screen: Screen, whose: str, kept: Kept | None) -> None:
    if kept is not None:
        screen.out.print(f"Kept {whose} container {kept.id}; enter it: {kept.command}", markup=False)


@dataclass(frozen=True)
class Replayed(Answer):
    report: ReplayReport
    workdir: str | None = None  # --workdir: the view ends with its diff against the recorded commit
    about = ": the report"

    @property
    def exit_code(self) -> int:
        return self.report.exit_code

    def data(self) -> Any:
        from ..report import to_json

        return to_json(self.report)

    def show(self, screen: Screen) -> None:
        from ..replay.workdir import report_diff
        from ..report import show

        show(self.report, screen.out, show_all=screen.full)
        if self.workdir is not None:
            screen.out.print(report_diff(self.report.notes, self.workdir), markup=False, highlight=False, end="")
        _kept_line(screen, "the attempt's", self.report.kept)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..report import SCHEMA, ReplayReport

        return d.root(ReplayReport, {"schema": {"const": SCHEMA}, "summary": STR})


@dataclass(frozen=True)
class Bisected(Answer):
    bad: Path
    good: Path | None  # None: a fix bisection (--fixed-at)
    result: BisectResult | CommitsResult | SweepResult | FixResult
    wall_s: float
    kept: Kept | None
    then: dict[str, Any] | None = None  # an undecided walk: the command that asks for the runs it likely needs

    @property
    def exit_code(self) -> int:
        return int(Exit.OK if self.result.found else Exit.NEGATIVE)

    def data(self) -> Any:
        from ..bisect import CommitsResult, SweepResult, commits_data, result_data, sweep_data, totals
        from ..bisect.fixes import FixResult, fix_data
        from ..codec import encode

        r, where = self.result, {"bad": str(self.bad), "good": self.good and str(self.good)}
        if isinstance(r, FixResult):
            found = {"mode": "fix", **fix_data(r), "totals": totals(r.walk.trials, self.wall_s)}
        elif isinstance(r, CommitsResult):
            found = {"mode": "commits", **commits_data(r), "totals": totals(r.walk.trials, self.wall_s)}
        elif isinstance(r, SweepResult):
            found = {"mode": "sweep", **sweep_data(r), "totals": totals(r.walk.trials, self.wall_s)}
        else:
            found = {"mode": "facts", **result_data(r), "totals": totals(r.trials, self.wall_s)}
        return {**where, **found, "kept": encode(self.kept), "next": self.then}

    def show(self, screen: Screen) -> None:
        from ..report.bisect_view import show

        show(screen.out, self.bad, self.good, self.result, self.wall_s, self.then)
        _kept_line(screen, "the bad end's attempt's", self.kept)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..bisect.commits import Commit, CommitsResult
        from ..bisect.fixes import FixResult
        from ..bisect.search import BisectResult
        from ..bisect.version_sweep import SweepResult
        from ..outcome.runreport import Kept

        step = nullable(obj({"argv": array(STR), "command": STR, "why": STR}))  # the runs that would likely decide
        where = {"bad": STR, "good": STR, "kept": nullable(d.of(Kept)), "next": step}
        facts = d.root(BisectResult, {**where, "mode": {"const": "facts"}, "also_failing": array(INT),
                                      "variant_builds": INT})
        commits = d.root(CommitsResult, {**where, "mode": {"const": "commits"},
                                         "first_failing": nullable(d.of(Commit))})
        sweep = d.root(SweepResult, {**where, "mode": {"const": "sweep"}, "summary": STR})
        fix = d.root(FixResult, {**where, "good": {"type": "null"}, "mode": {"const": "fix"},
                                 "fixing": nullable(d.of(Commit))})
        return {"oneOf": [facts, commits, sweep, fix]}


def _night() -> dict[str, Any]:
    return obj({"id": STR, "started_at": STR, "finished_at": nullable(STR), "ref": nullable(STR),
                "sources": array(STR), "capsules": INT, "images": INT, "builds": INT,
                "counts": {"type": "object", "additionalProperties": INT}})


@dataclass(frozen=True)
class NightRun(Answer):
    night: Night
    fixes: list[FoundFix] | None = None  # --find-fix: the commit that fixed each capsule fixed at --ref

    @property
    def exit_code(self) -> int:
        return int(self.night.exit_code)

    def data(self) -> Any:
        from ..codec import encode
        from ..report.farm_view import run_json

        return {**run_json(self.night), "fixes": encode(self.fixes)}

    def show(self, screen: Screen) -> None:
        from ..bisect.farmfix import fixes_said
        from ..report.farm_view import show_run

        show_run(self.night, screen.out, fixes_said(self.fixes or []))

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..bisect.farmfix import FoundFix
        from ..farm.records import CapsuleResult

        return obj({"night": _night(), "results": array(d.of(CapsuleResult)),
                    "fixes": nullable(array(d.of(FoundFix)))})  # --find-fix


@dataclass(frozen=True)
class FarmView(Answer):
    view: Attention

    @property
    def exit_code(self) -> int:
        return int(Exit.OK)

    def data(self) -> Any:
        from ..report.farm_view import report_json

        return report_json(self.view)

    def show(self, screen: Screen) -> None:
        from ..report.farm_view import show_report

        show_report(self.view, screen.out, show_all=screen.full)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..farm.attention import GROUPS
        from ..farm.records import Transition

        run = NightRun.schema(d)
        one_night = {k: v for k, v in run.items() if k in ("type", "properties", "required")}
        one_night = {**one_night, "properties": {k: v for k, v in one_night["properties"].items() if k != "fixes"},
                     "required": [k for k in one_night["required"] if k != "fixes"]}  # --find-fix: farm run's alone
        row = obj({"capsule_id": STR, "path": STR, "group": {"enum": list(GROUPS)}, "verdict": STR,
                   "standing": STR, "held_nights": INT, "not_applied": array(STR),
                   "signature": nullable(STR), "ref_verdict": nullable(STR), "in_last_night": BOOL,
                   "first_seen": obj({"night_id": STR, "started_at": STR}),
                   "last_change": obj({"night_id": STR, "started_at": STR, "from": STR, "to": STR}),
                   "rate": nullable(obj({"failed": INT, "runs": INT, "low": NUM, "high": NUM, "confidence": NUM,
                                         "nights": INT})),
                   "strip": array(nullable(STR)), "command": STR})
        return obj({"nights": array(_night()), "window": INT, "fixed_after": INT,
                    "groups": obj({g: INT for g in GROUPS}), "rows": array(row),
                    "since_last_night": array(d.of(Transition)), "last_night": nullable(one_night)})


@dataclass(frozen=True)
class History(Answer):
    asked: str
    matched: str
    results: list[CapsuleResult]

    @property
    def exit_code(self) -> int:
        return int(Exit.OK if self.results else Exit.NEGATIVE)  # no night recorded for it: a negative answer

    def data(self) -> Any:
        from ..report.farm_view import history_json

        return history_json((self.matched, self.results))

    def show(self, screen: Screen) -> None:
        from ..report.farm_view import show_history
        from ..textsafe import escaped

        screen.out.print(escaped(self.matched), markup=False)
        if self.results:
            show_history(self.results, screen.out)
        else:
            screen.out.print(escaped(f"no nights recorded for {self.asked}"), markup=False)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..farm.records import CapsuleResult

        return obj({"capsule_id": nullable(STR), "path": nullable(STR), "matched": STR,
                    "nights": array(d.of(CapsuleResult))})


@dataclass(frozen=True)
class Pinned(Answer):
    result: PinResult

    @property
    def exit_code(self) -> int:
        return self.result.exit_code

    def data(self) -> Any:
        return self.result.data()

    def show(self, screen: Screen) -> None:
        from ..report.pinned import show_pin

        show_pin(self.result, screen.out)

    @classmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        from ..pinning.pinsearch import PinResult

        return d.root(PinResult)
