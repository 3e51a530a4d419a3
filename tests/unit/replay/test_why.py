"""A verdict that says why (issue 30): NOT-REPRODUCED and DIFFERENT-FAILURE end with the likeliest
causes, ranked, each with the command to try next; none when the run came back."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.build.plan import Fidelity, PlanOptions
from runner.engine import RunResult, RunSpec
from runner.httpreplay.served import Difference, HttpReport, UnmatchedRequest, UnusedCall
from runner.replay import Progress, ReplayOptions, replay_capsule
from runner.facts.reads import Read, scan
from runner.replay.why import likeliest
from runner.report import from_json, show, to_json
from runner.verdict.judge import Attempt, Expected
from runner.verdict.sameness import OutputDiff
from tests.examples import BUNDLE, TZ_CAPSULE, json_variant
from tests.unit.fake_engine import FakeEngine

FAILED = Expected(True, 1, None, "exit1:abc", ("Error: boom",))
PASSED = Attempt(0, None, "", (), 0.1, classification="pass")
RERUN = ["replay", "c.json", "--repo", "../app.git"]
NAME_ONLY = Fidelity("env APP_LANG", "set (value not recorded)", "unset", "not applied", "value not recorded")
TERM_ONLY = Fidelity("env TERM", "set (value not recorded)", "unset", "not applied", "value not recorded")
NODE = Fidelity("runtime node", "not recorded", "22.23.5", "approximated", "the newest 22.x")


def test_a_run_that_came_back_needs_no_cause() -> None:
    assert likeliest("reproduced", FAILED, [PASSED], [NAME_ONLY], None, RERUN) == ()


def test_a_variable_without_its_value_says_how_to_supply_it_now_and_record_it_next_time() -> None:
    (cause,) = likeliest("not-reproduced", FAILED, [PASSED] * 3, [NAME_ONLY], None, RERUN)
    assert (cause.cause, cause.fact) == ("env-value", "env APP_LANG")
    assert cause.next.startswith("replay c.json --repo ../app.git --env 'APP_LANG=…' now")
    assert "replay capture --include-env APP_LANG" in cause.next


def test_causes_are_ranked_requests_first_then_decisive_variables() -> None:
    http = HttpReport(unmatched=(UnmatchedRequest("GET", "https://api.example.com/x?ts=2", 0, 1,
                                                  "GET https://api.example.com/x?ts=1",
                                                  (Difference("query", "extra ['ts=2'], missing ['ts=1']"),)),),
                      unservable=(UnusedCall(2, "GET", "http://127.0.0.1:9/", "loopback"),))
    causes = likeliest("not-reproduced", FAILED, [PASSED], [NODE, NAME_ONLY, TERM_ONLY], http, RERUN,
                       argv=["node", "--test"])
    assert [c.fact for c in causes] == ["http GET https://api.example.com/x?ts=2", "http GET http://127.0.0.1:9/",
                                        "env TERM", "runtime node", "env APP_LANG"]
    assert [c.score for c in causes] == [100, 90, 20, 20, 5]
    assert causes[0].next == "replay c.json --repo ../app.git --http-ignore=ts"  # the parameter that differs
    assert "--sweep runtime:node" in causes[3].next


def test_a_difference_in_output_only_is_named_with_where() -> None:
    other = Attempt(0, None, "", (), 0.1, classification="other",
                    differs=OutputDiff("stdout", 3, "added 1 package", "added 2 packages"))
    (cause,) = likeliest("not-reproduced", Expected(False, 0, None, None), [other, other], [], None, RERUN)
    assert cause.cause == "output"
    assert cause.evidence.startswith("2/2 attempt(s) passed as recorded, but stdout differs at line 3")


@pytest.mark.usefixtures("offline_registry")
def test_the_report_ends_with_the_causes_and_carries_them_in_its_json(tmp_path: Path) -> None:
    """APP_LANG=de recorded by name only and the run passes here: NOT-REPRODUCED says why."""
    capsule = json_variant(TZ_CAPSULE, tmp_path, lambda d: d["env"].update(APP_LANG={"state": "set"}))

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        return RunResult(0, b"ok\n", b"ok\n", 0.2)

    report = replay_capsule(capsule, ReplayOptions(plan=PlanOptions(repo=str(BUNDLE))), Progress(),
                            engine=FakeEngine(run=run, images=["replay-base/debian:bookworm"]))
    assert report.verdict == "not-reproduced"
    assert any(c.fact == "env APP_LANG" for c in report.why)
    data = to_json(report)
    assert {"cause", "fact", "evidence", "next", "score"} == set(data["why"][0])
    assert from_json(data) == report

    import io

    from rich.console import Console

    out = io.StringIO()
    show(report, Console(file=out, width=200))
    said = out.getvalue()
    assert "why, by the evidence (highest score first):" in said and f"--repo {BUNDLE} --env 'APP_LANG=…'" in said


# -- ranked by evidence (issue 38) -----------------------------------------------------------

CA_NAMES = ("AWS_CA_BUNDLE", "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
            "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


def name_only(name: str) -> Fidelity:
    return Fidelity(f"env {name}", "set (value not recorded)", "unset", "not applied", "value not recorded")


def test_a_variable_the_source_reads_comes_before_the_variables_recorded_by_name_only() -> None:
    rows = [name_only(n) for n in (*CA_NAMES, "ZZ_MODE", *(f"Z{i}" for i in range(11)))]
    reads = [Read("ZZ_MODE", "test/mode.test.js:3")]
    causes = likeliest("not-reproduced", FAILED, [PASSED] * 3, rows, None, RERUN, argv=["node", "--test"], reads=reads)
    assert len(causes) == 20  # every candidate kept
    assert causes[0].fact == "env ZZ_MODE" and causes[0].score == 45
    assert causes[0].evidence == ("source: test/mode.test.js:3 reads ZZ_MODE; capsule: recorded by name only; "
                                  "the replay ran without it")
    assert {c.score for c in causes[1:]} == {5}


def test_home_not_recorded_is_a_candidate_when_the_source_reads_it_and_the_output_names_a_path_under_it() -> None:
    expected = Expected(True, 1, None, "exit1:x", ("FAIL: no settings in ~/.config/app/settings.json",))
    reads = [Read("HOME", "homedir.go:41"), Read("PATH", "run.sh:2")]
    causes = likeliest("not-reproduced", expected, [PASSED] * 3, [name_only(n) for n in CA_NAMES], None, RERUN,
                       argv=["go", "test", "./..."], reads=reads)
    home = causes[0]
    assert (home.cause, home.fact, home.score) == ("env-unrecorded", "env HOME", 40 + 25 + 15)
    assert home.evidence.startswith("source: homedir.go:41 reads HOME; output: ~/.config/app/settings.json is a "
                                    "path under a home directory; tool: go reads HOME")
    assert "--env 'HOME=…'" in home.next
    assert "env PATH" not in [c.fact for c in causes]  # set for every run: no sign of a difference


def test_a_flaky_failure_nothing_direct_explains_is_the_commands_own_randomness() -> None:
    flaky = [Attempt(1, None, "exit1:abc", (), 0.1, classification="recorded"), PASSED]
    rows = [name_only(n) for n in (*CA_NAMES, "TERM")]
    causes = likeliest("flaky", FAILED, flaky, rows, None, RERUN, argv=["sh", "-c", "n=$(od -An -N1 /dev/urandom)"])
    assert causes[0].cause == "randomness"
    assert causes[0].evidence.startswith("no recorded fact explains it: the command's own randomness")
    assert "replay pin c.json" in causes[0].next
    assert all(c.score < 25 for c in causes[1:])


def test_a_flaky_failure_with_direct_evidence_names_it_not_randomness() -> None:
    flaky = [Attempt(1, None, "exit1:abc", (), 0.1, classification="recorded"), PASSED]
    causes = likeliest("flaky", FAILED, flaky, [name_only("SEED_MODE")], None, RERUN,
                       argv=["sh", "-c", 'test "$SEED_MODE" = fixed || exit 1'])
    assert causes[0].fact == "env SEED_MODE" and "command: the command line reads $SEED_MODE" in causes[0].evidence
    assert "randomness" not in [c.cause for c in causes]


def test_an_override_after_which_the_outcome_changed_is_named_first() -> None:
    tz = Fidelity("env TZ", "America/New_York", "(supplied)", "not applied", "overridden with --env")
    rerun = [*RERUN, "--env", "TZ=$TZ"]
    causes = likeliest("not-reproduced", FAILED, [PASSED] * 3, [NODE, tz, TERM_ONLY], None, rerun, argv=["node"])
    assert (causes[0].cause, causes[0].fact) == ("change", "env TZ")
    assert "--env TZ replaced the recorded TZ (America/New_York)" in causes[0].evidence
    assert causes[0].next == "replay c.json --repo ../app.git (without --env TZ)"
    assert "env TZ" not in [c.fact for c in causes[1:]]


def test_a_runtime_the_command_does_not_run_ranks_below_one_it_runs() -> None:
    py = Fidelity("runtime python", "not recorded", "3.11.2", "approximated", "Debian's")
    npm = Fidelity("package manager npm", "not recorded", "10.9.9", "approximated", "the newest 10.x")
    causes = likeliest("not-reproduced", FAILED, [PASSED], [py, NODE, npm], None, RERUN, argv=["npx", "jest"])
    assert [(c.fact, c.score) for c in causes] == [("runtime node", 20), ("runtime python", 3),
                                                   ("package manager npm", 3)]
    causes = likeliest("not-reproduced", FAILED, [PASSED], [npm], None, RERUN, argv=["npm", "test"])
    assert [(c.fact, c.score) for c in causes] == [("package manager npm", 15)]


def test_the_source_scan_finds_each_languages_reads_and_stays_in_the_project(tmp_path: Path) -> None:
    files = {"homedir.go": 'package h\n\nfunc Dir() string {\n\treturn os.Getenv("HOME")\n}\n',
             "test/a.test.js": "const m = process.env.ZZ_MODE;\nconst n = process.env['ZZ_OTHER'];\n",
             "conf.py": "import os\nx = os.environ.get('PY_VAR')\ny = os.getenv(\"PY_TWO\")\n",
             "lib.rb": 'ENV.fetch("RB_VAR")\n', "src/main.rs": 'let v = std::env::var("RS_VAR");\n',
             "run.sh": 'echo "$SH_VAR ${SH_TWO:-x} $RANDOM"\n', "README.md": "set $DOC_VAR\n",
             "node_modules/dep/index.js": "process.env.DEP_VAR\n", "bin.js": "\0process.env.BIN_VAR\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "link.js").symlink_to("/etc/passwd")
    found = {r.name: r.where for r in scan(tmp_path)}
    assert found == {"HOME": "homedir.go:4", "ZZ_MODE": "test/a.test.js:1", "ZZ_OTHER": "test/a.test.js:2",
                     "PY_VAR": "conf.py:2", "PY_TWO": "conf.py:3", "RB_VAR": "lib.rb:1", "RS_VAR": "src/main.rs:1",
                     "SH_VAR": "run.sh:1", "SH_TWO": "run.sh:1"}


def test_the_source_scan_stops_at_its_file_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(10):
        (tmp_path / f"f{i}.js").write_text(f"process.env.V{i}\n")
    monkeypatch.setattr("runner.facts.reads.MAX_FILES", 3)
    assert [r.name for r in scan(tmp_path)] == ["V0", "V1", "V2"]


def test_a_ref_or_patch_after_which_the_outcome_changed_comes_first() -> None:
    from runner.replay.why import Change

    change = Change("source --patch", "the run applied the patch; the outcome changed after it")
    causes = likeliest("not-reproduced", FAILED, [PASSED], [NAME_ONLY, NODE], None, RERUN, argv=["node"],
                       reads=[Read("APP_LANG", "i18n.js:3")], changes=[change])
    assert [(c.cause, c.fact) for c in causes[:2]] == [("change", "source --patch"), ("env-value", "env APP_LANG")]


def test_the_text_shows_five_causes_and_how_many_more_and_all_of_them_with_all() -> None:
    import io

    from rich.console import Console

    from runner.report.text import _why

    from runner.report.layout import View

    causes = likeliest("not-reproduced", FAILED, [PASSED], [name_only(f"V{i}") for i in range(8)], None, RERUN)
    report = type("R", (), {"why": causes})()
    for show_all, listed, more in ((False, 5, "and 3 more (--all lists them"), (True, 8, None)):
        out = io.StringIO()
        _why(report, View(Console(file=out, width=250)), show_all)  # type: ignore[arg-type]
        said = out.getvalue()
        assert f"  {listed}. env V{listed - 1} (score 5)" in said and f"  {listed + 1}. " not in said
        assert (more in said) if more else "more (--all" not in said


def test_a_file_name_with_control_characters_is_escaped_in_the_evidence(tmp_path: Path) -> None:
    (tmp_path / "evil\nFAKE: line\x1b[2J.js").write_text("process.env.X_MODE\n")
    (found,) = scan(tmp_path)
    assert found.where == "evil\\x0aFAKE: line\\x1b[2J.js:1"
