"""--debugger's pure parts: the command under each runtime's debugger, the derived image's
Dockerfile, the attach text, the debugged command's spec."""
from __future__ import annotations

import json

import pytest

from runner.engine import RunSpec
from runner.errors import UsageError
from runner.replay import debugger as dbg


def test_node_gets_inspect_brk_on_every_address_inside() -> None:
    d = dbg.debugged(("node", "--test", "test/a.test.js"), 9229)
    assert (d.runtime, d.argv, d.env) == ("node", ("node", "--inspect-brk=127.0.0.1:9229", "--test", "test/a.test.js"), ())


def test_npm_runs_node_with_node_options_and_says_what_that_costs() -> None:
    d = dbg.debugged(("npm", "test"), 9229)
    assert d.argv == ("npm", "test") and d.env == (("NODE_OPTIONS", "--inspect-brk=127.0.0.1:9229"),)
    assert "first node process" in d.note


def test_python_and_pytest_run_under_debugpy_waiting_for_a_client() -> None:
    assert dbg.debugged(("python3", "-m", "pytest", "-x"), 5678).argv == (
        "python3", "-m", "debugpy", "--listen", "127.0.0.1:5678", "--wait-for-client", "-m", "pytest", "-x")
    assert dbg.debugged(("pytest", "tests/"), 5678).argv == (
        "/opt/venv/bin/python", "-m", "debugpy", "--listen", "127.0.0.1:5678", "--wait-for-client", "-m", "pytest",
        "tests/")


def test_runenvs_env_prefix_stays_in_front() -> None:
    d = dbg.debugged(("/usr/bin/env", "-u", "CI", "node", "x.js"), 9229)
    assert d.argv == ("/usr/bin/env", "-u", "CI", "node", "--inspect-brk=127.0.0.1:9229", "x.js")


def test_go_test_becomes_delves_test_server_with_the_flags_for_the_test_binary() -> None:
    d = dbg.debugged(("go", "test", "-run", "TestX", "-count=1", "-v", "./pkg/..."), 2345)
    assert d.runtime == "go"
    assert d.argv[:3] == ("dlv", "test", "./pkg/...")
    assert "--headless" in d.argv and "--listen=127.0.0.1:2345" in d.argv
    assert d.argv[d.argv.index("--") + 1:] == ("-test.run", "TestX", "-test.count=1", "-test.v")


def test_go_tests_boolean_flags_take_no_value_and_build_flags_go_to_the_build() -> None:
    d = dbg.debugged(("go", "test", "-failfast", "-covermode", "atomic", "-vet=off", "-race", "./pkg"), 2345)
    assert d.argv[:3] == ("dlv", "test", "./pkg")
    assert "--build-flags=-covermode=atomic -vet=off -race" in d.argv
    assert d.argv[d.argv.index("--") + 1:] == ("-test.failfast",)


def test_go_run_becomes_delves_debug_server_with_the_programs_arguments() -> None:
    d = dbg.debugged(("go", "run", "./cmd/app", "--flag"), 2345)
    assert d.argv[:3] == ("dlv", "debug", "./cmd/app") and d.argv[-2:] == ("--", "--flag")


def test_go_test_of_several_packages_is_one_line() -> None:
    with pytest.raises(UsageError, match="one package at a time"):
        dbg.debugged(("go", "test", "./a", "./b"), 2345)


@pytest.mark.parametrize("argv", [("make", "test"), ("go", "build"), ("cargo", "test"), ()])
def test_a_command_with_no_debugger_here_is_a_usage_error(argv: tuple[str, ...]) -> None:
    with pytest.raises(UsageError, match="has no debugger here") as exc:
        dbg.debugged(argv, 1)
    assert exc.value.exit_code == 2


def test_the_derived_image_adds_debugpy_from_the_index_in_a_layer_of_its_own() -> None:
    text = dbg.derived_dockerfile("replay/img:abc-123", "python", "https://pypi.org/simple", None)
    assert text.startswith("FROM replay/img:abc-123\n")
    assert f"debugpy=={dbg.DEBUGPY_VERSION}" in text and "PIP_CERT=/etc/ssl/certs/ca-certificates.crt" in text
    assert "PIP_INDEX_URL=https://pypi.org/simple" in text
    assert dbg.derived_tag("replay/img:abc-123", "python") == "replay/img:abc-123-debugpy"


def test_the_derived_image_quotes_the_index_for_the_shell() -> None:
    text = dbg.derived_dockerfile("img:t", "python", "https://x.example/simple; rm -rf /", "x.example")
    assert "'https://x.example/simple; rm -rf /'" in text


def test_delve_comes_from_debians_package() -> None:
    text = dbg.derived_dockerfile("img:t", "go", "https://pypi.org/simple", None)
    assert "apt-get install -y -q --no-install-recommends delve;" in text and "debugpy" not in text


def test_node_debugs_in_the_replay_image_itself_and_others_build_once() -> None:
    built: list[str] = []
    have = {"img:t"}

    def build(ctx: object, tag: str) -> None:
        built.append(tag)
        have.add(tag)
    assert dbg.with_debugger(build, have.__contains__, "img:t", "node", lambda: "") == "img:t"
    assert dbg.with_debugger(build, have.__contains__, "img:t", "python", lambda: "FROM img:t\n") == "img:t-debugpy"
    assert dbg.with_debugger(build, have.__contains__, "img:t", "python", lambda: "FROM img:t\n") == "img:t-debugpy"
    assert built == ["img:t-debugpy"]


@pytest.mark.parametrize("runtime,cli", [("node", "node inspect 127.0.0.1:4000"), ("go", "dlv connect 127.0.0.1:4000"),
                                         ("python", "")])
def test_the_attach_text_has_a_launch_json_entry_and_the_cli_way(runtime: dbg.DebugRuntime, cli: str) -> None:
    text = dbg.attach_text(runtime, 4000)
    assert "127.0.0.1:4000" in text and (cli in text)
    entry = json.loads(text[text.index("{"):])
    assert entry["request"] == "attach" and "4000" in json.dumps(entry)


def test_the_debugged_command_keeps_the_attempts_network_and_is_named_for_the_relay() -> None:
    spec = RunSpec(image="img:t", argv=("npm", "test"), env=(("NODE_OPTIONS", "--max-old-space-size=100"),))
    out = dbg.debuggee_spec(spec, dbg.debugged(spec.argv, 9229), "img:dbg", "replay-debuggee-x")
    assert (out.network, out.name, out.image) == ("none", "replay-debuggee-x", "img:dbg")
    assert dict(out.env)["NODE_OPTIONS"] == "--max-old-space-size=100 --inspect-brk=127.0.0.1:9229"


def test_go_test_of_every_package_below_debugs_the_working_directorys_own_and_says_so() -> None:
    d = dbg.debugged(("go", "test", "./..."), 2345)
    assert d.argv[:3] == ("dlv", "test", ".") and "./..." in d.note


@pytest.mark.parametrize("go, suite, mismatch", [
    ("1.19.8", "bookworm", False), ("1.20.1", "bookworm", False),  # bookworm's own Delve supports it
    ("1.22.10", "trixie", False), ("1.24.4", "trixie", False),  # trixie's Delve, installed on bookworm
    ("1.21.3", "trixie", True), ("1.27.1", "trixie", True),  # no source offers one: said
])
def test_delve_is_matched_to_the_recorded_go_where_a_source_offers_one(go: str, suite: str, mismatch: bool) -> None:
    delve, said = dbg.delve_for("bookworm", go)
    assert delve is not None and delve.suite == suite
    assert bool(said) == mismatch
    if mismatch:
        assert f"not the recorded Go {go}" in said and f"Delve {delve.version}" in said


def test_a_delve_from_another_suite_is_that_one_package_and_the_std_is_compiled_for_it() -> None:
    text = dbg.derived_dockerfile("img:t", "go", "https://pypi.org/simple", None, dbg.Delve("trixie", "1.24.0"),
                                  "bookworm")
    assert "main\" > /etc/apt/sources.list.d/replay-delve.list" in text and "delve/trixie" in text
    assert "-t trixie" not in text  # the target release would upgrade glibc and the rest with it
    assert "go build -gcflags 'all=-N -l' std" in text
    assert dbg.derived_tag("img:t", "go", dbg.Delve("trixie", "1.24.0")) == "img:t-delve1.24.0"
    own = dbg.derived_dockerfile("img:t", "go", "https://pypi.org/simple", None, dbg.Delve("bookworm", "1.20.2"),
                                 "bookworm")
    assert "replay-delve.list" not in own and "--no-install-recommends delve;" in own


def test_the_go_tests_own_verdict_is_their_binarys_last_pass_or_fail() -> None:
    assert dbg.go_test_verdict("=== RUN   TestX\n--- FAIL: TestX (0.00s)\nFAIL\n") == 1
    assert dbg.go_test_verdict("=== RUN   TestX\n--- PASS: TestX\nPASS\n") == 0
    assert dbg.go_test_verdict("API server listening at: 127.0.0.1:2345\n") is None


def test_the_end_of_a_delve_run_says_the_tests_verdict_not_delves() -> None:
    from runner.replay.debugrun import Debugged
    from runner.replay.interactive import ended_line
    from runner.verdict.judge import Attempt

    failed = Attempt(1, None, "sig", (), 1.0, False, b"", "FAIL\n", classification="recorded")
    line = ended_line(Debugged("go", 2345, failed, "", debugger_exit=0))
    assert line == "the command ended: as recorded (the tests failed: exit 1 as go test gives it; Delve itself exited 0)"
    passed = Attempt(0, None, "sig", (), 1.0, False, b"", "ok\n", classification="pass")
    assert ended_line(Debugged("node", 9229, passed, "", 0)) == "the command ended: pass (exit 0)"


def test_the_binarys_output_under_delve_is_judged_as_go_test_prints_it() -> None:
    from runner.verdict import signature as sig

    recorded = "--- FAIL: TestBoom (0.00s)\n    boom_test.go:6: error: boom\nFAIL\nFAIL\texample.com/boom\t0.002s\nFAIL\n"
    under_delve = ("API server listening at: 127.0.0.1:2345\n--- FAIL: TestBoom (0.00s)\n"
                   "    boom_test.go:6: error: boom\nFAIL\n")
    key_lines = sig.compute(recorded, 1, None).key_lines
    judged = dbg.as_go_test(under_delve, 1, key_lines)
    assert "API server" not in judged
    assert sig.compute(judged, 1, None).signature == sig.compute(recorded, 1, None).signature
    assert dbg.as_go_test("PASS\n", 0, key_lines).endswith("PASS\nok  \texample.com/boom\t0.001s\n")


@pytest.mark.usefixtures("offline_registry")
def test_an_image_without_perl_is_refused_before_the_debuggee_runs() -> None:
    """relay.pl runs in the debuggee: an image without perl (Alpine) would drop every client; one line, exit 2."""
    from runner.build.plan import PlanOptions
    from runner.engine import RunResult
    from runner.errors import ImageLacks
    from runner.replay import Progress, ReplayOptions
    from runner.replay.debugrun import debug_capsule

    from tests.examples import BUNDLE, TZ_CAPSULE
    from tests.unit.fake_engine import FakeEngine

    asked: list[RunSpec] = []

    def run(spec: RunSpec) -> RunResult:
        if spec.argv[:2] == ("sh", "-c") and "perl" in spec.argv[2]:  # the relay's probe: none here
            asked.append(spec)
            return RunResult(127, b"", b"", 0.1)
        if spec.argv[:2] == ("sh", "-c"):  # the image-facts probe
            return RunResult(0, b"2.36\n---\n{}", b"2.36\n---\n{}", 0.1)
        raise AssertionError(f"the debuggee ran: {spec.argv}")
    engine = FakeEngine(run=run, images=["replay-base/debian:bookworm"])
    said: list[str] = []
    with pytest.raises(ImageLacks) as exc:
        debug_capsule(TZ_CAPSULE, ReplayOptions(attempts=1, plan=PlanOptions(repo=str(BUNDLE))), Progress(), 0,
                      said.append, engine=engine)
    assert exc.value.exit_code == 2 and "\n" not in exc.value.line()
    assert exc.value.line().startswith("--debugger: this capsule's image has no perl")
    assert len(asked) == 1 and said == []
