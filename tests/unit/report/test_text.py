"""The run report's text view, on report values: short by default, whole with --all,
identifiers never split, plain text when not on a terminal."""
from __future__ import annotations

import dataclasses
import io
import re

from rich.console import Console

from runner.build.plan import Fidelity
from runner.verdict.judge import Attempt, Expected, judge_fix
from runner.verdict.rate import Rate
from runner.report import Baseline, ReplayReport, show, to_json
from tests.support.reports import BOX, COMMIT, LOCK_SHA, RUN_SIG as SIG, report

def text(r: ReplayReport, width: int = 100, show_all: bool = False, terminal: bool = False) -> str:
    buf = io.StringIO()
    show(r, Console(file=buf, width=width, force_terminal=terminal, color_system=None, highlight=False), show_all)
    return buf.getvalue()


def test_the_default_view_is_short_and_ends_with_one_sentence() -> None:
    assert len(text(report(), width=140).splitlines()) <= 6  # in a pipe (140 columns)
    lines = text(report()).splitlines()
    # the sentence is 110 characters: at 100 columns it breaks between its clauses, never inside one
    assert lines[-2:] == [f"REPRODUCED: 3/3 attempts failed as recorded ({SIG});",
                          "fails in at least 44 % of runs (95 %)."]
    assert text(report(), width=120).splitlines()[-1] == report().summary  # whole on one line when it fits
    out = "\n".join(lines)
    assert lines[0] == "twin capsule examples/tz-clock/capsule.json (d0f03b168058c2b0): valid"
    assert lines[1].startswith("steps: ")
    assert not any(line.startswith("env VAR_") for line in lines)  # no name-only rows
    assert sum("set (value not recorded)" in line for line in lines) == 1  # one note for all of them
    assert "60 variable(s) set (value not recorded), left unset: VAR_0, VAR_1," in out and "and 52 more" in out
    assert "5 of 68 facts replayed exactly; 3 more could not change the outcome (-v lists them)" in out
    # not needed, host-specific, nothing recorded: none of them could have changed the outcome
    assert "runtime python" not in out and "real time" not in out and "env PATH" not in out
    assert "platform distro" not in out and "America/New_York" not in out  # the exact rows are not
    assert "#  exit" not in out and "recorded: fail" not in out  # the attempts table: -v


def test_the_default_view_lists_a_fact_that_could_change_the_outcome() -> None:
    nearest = Fidelity("runtime node", "22.23.3", "22.23.5", "approximated", "the nearest release offered")
    r = report()
    out = text(dataclasses.replace(r, fidelity=(*r.fidelity, nearest)))
    assert "fidelity: what was not replayed exactly and could change the outcome" in out
    assert re.search(r"runtime node\s+22\.23\.3\s+22\.23\.5\s+approximated", out), out
    assert "runtime python" not in out


def test_the_sentence_breaks_only_between_clauses_and_a_clause_is_never_split() -> None:
    r = report()
    lines = text(r, width=40).splitlines()
    clauses = r.summary.split("; ")
    assert lines[-2:] == [clauses[0] + ";", clauses[1]]  # the first clause is wider than 40: it runs past, whole


def test_all_lists_every_row() -> None:
    out = text(report(), show_all=True)
    assert "platform distro" in out and "env TZ" in out and "env VAR_59" in out
    assert "build image (buildkit)" in out  # every step too


def hex_runs_are_whole(out: str, ids: list[str]) -> bool:
    """Every hex run of 7+ digits printed is the start of a known id: a split leaves a tail that is not."""
    return all(any(i.startswith(run) for i in ids) for run in re.findall(r"(?<![0-9a-f])[0-9a-f]{7,}", out))


def test_no_line_splits_a_sha_at_60_columns() -> None:
    ids = [COMMIT, LOCK_SHA, SIG.split(":")[1], "d0f03b168058c2b0"]
    for terminal in (False, True):
        for show_all in (False, True):
            out = text(report(), width=60, show_all=show_all, terminal=terminal)
            assert hex_runs_are_whole(out, ids), out
            clauses = {c.rstrip(";") for c in report().summary.split("; ")}  # whole, even wider than the console
            assert all(len(line) <= 60 for line in out.splitlines() if line.rstrip(";") not in clauses), out
    assert COMMIT[:12] in text(report(), width=60, show_all=True)
    assert to_json(report())["fidelity"][4]["recorded"] == COMMIT  # the full one is in --json


def test_the_check_itself_catches_a_split() -> None:
    assert not hex_runs_are_whole(f"commit {COMMIT[:20]}\n{COMMIT[20:]}", [COMMIT])


def test_plain_text_when_not_a_terminal() -> None:
    for width in (60, 100):
        out = text(report(), width=width, show_all=True)
        assert not set(out) & BOX
        assert all(line == line.rstrip() for line in out.splitlines())
    assert set(text(report(), terminal=True, show_all=True)) & BOX  # a terminal gets the ruled tables


def test_a_patched_report_shows_both_runs() -> None:
    unpatched = tuple(Attempt(0, None, "exit0:0000000000000000", (), 0.4, classification="pass") for _ in range(3))
    gone = Rate.of(0, 3)
    fix = judge_fix(Expected(True, 1, None, SIG, ("FAIL x",)), gone, ())
    r = report(verdict=fix.verdict, baseline=Baseline("not-reproduced", unpatched, rate=gone), attempts=(), fix=fix)
    out = text(r, width=300)
    assert "unpatched source (baseline): not-reproduced, 0/3 failed as recorded (at most 56 %)" in out
    assert "attempts with the patch" not in out  # its table: -v
    assert "attempts with the patch" in text(r, width=200, show_all=True)
    assert out.splitlines()[-1] == ("INCONCLUSIVE: the unpatched source did not reproduce the failure here "
                                    "(0/3 runs failed as recorded), so the fix cannot be judged; run again with "
                                    "--attempts 14: in 14 runs a failure that comes back in 1 run of 5 shows at 95 %.")
    data = to_json(r)
    assert data["baseline"]["verdict"] == "not-reproduced" and len(data["baseline"]["attempts"]) == 3
    assert data["summary"] == out.splitlines()[-1]


def test_an_attempt_whose_output_differs_says_where_once() -> None:
    from runner.verdict.sameness import OutputDiff

    differs = OutputDiff("key lines", 2, "FAILED a.py::t - Asser...", "FAILED a.py::t - AssertionError: x")
    attempts = tuple(Attempt(1, None, "exit1:0000000000000000", ("FAIL x", "FAILED a.py::t - AssertionError: x"), 0.5,
                             classification="recorded", differs=differs) for _ in range(2))
    out = text(report(attempts=attempts))
    assert "recorded (output differs)" in text(report(attempts=attempts), show_all=True)  # the attempts table
    assert out.count("key lines differ at key line 2: recorded 'FAILED a.py::t - Asser...'") == 1
    assert "attempt 1: key lines differ" in out
    assert "key lines here:" not in out  # reproduced: the one line says where, not both lists
    assert "output differs" not in text(report())


def test_a_seed_applied_is_listed_though_it_is_exact() -> None:
    import dataclasses

    from runner.build.plan import Fidelity

    seed = Fidelity("seed", "randomly 2294562427", "PYTEST_ADDOPTS=--randomly-seed=2294562427", "exact",
                    "applied, recorded 2294562427")
    r = report()
    out = text(dataclasses.replace(r, fidelity=(*r.fidelity, seed)), width=160)
    assert "what was not replayed exactly and could change the outcome, and the seeds and pin applied" in out
    assert "applied, recorded 2294562427" in out
    assert "6 of 69 facts replayed exactly" in out
