"""What a Go image compiles ahead (build/gowarm.py): read off the recorded command, validated,
rendered in JSON form; Python's bytecode compiled in the image. Golden files: REPLAY_UPDATE_GOLDEN=1."""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from runner.build.gowarm import built_rows, go_warm, warm_rows
from runner.build.plan import EnvSetting, GoWarm, Plan, Runtime, Source
from runner.build.plancodec import plan_from_json, plan_to_json
from runner.build.render import render
from runner.capsules.model import FrozenMap
from runner.config import settings
from runner.engine.steps import step_name
from runner.errors import CapsuleError

from tests.unit.bisect.fakes import BOOKWORM

CASES = Path(__file__).resolve().parents[2] / "cases" / "render"


def env(**values: str) -> FrozenMap[str, EnvSetting]:
    return FrozenMap({k: EnvSetting("set", v) for k, v in values.items()})


@pytest.mark.parametrize(("argv", "want"), [
    (("go", "test", "./..."), GoWarm("test", ("./...",))),
    (("go", "test"), GoWarm("test", (".",))),
    # flags that change what is compiled are kept (as -name=value); the others, and their values, are not packages
    (("go", "test", "-v", "-race", "-tags", "integration", "-run", "TestX", "./pkg/...", "-count=3"),
     GoWarm("test", ("./pkg/...",), ("-race", "-tags=integration"))),
    # past the first flag after the packages, the arguments are the test binary's
    (("go", "test", "./a", "./b", "-v", "extra"), GoWarm("test", ("./a", "./b"))),
    (("/usr/local/go/bin/go", "test", "./x", "-args", "./y"), GoWarm("test", ("./x",))),
    (("go", "run", "./cmd/tool", "-flag", "./not-a-package"), GoWarm("build", ("./cmd/tool",))),
    (("go", "build", "-o", "out", "./..."), GoWarm("std")),  # -o, -C, -exec: not the command the warm-up runs
    (("go", "test", "-C", "sub", "./..."), GoWarm("std")),
    (("make", "test"), GoWarm("std")),
    (("go", "generate", "./..."), GoWarm("std")),
])
def test_the_recorded_command_says_what_to_compile(argv: tuple[str, ...], want: GoWarm) -> None:
    assert go_warm(argv, env()) == want


@pytest.mark.parametrize("hostile", ["$(touch /tmp/pwned)", "a;b", "-", "../outside", "a\nb", "`id`", "a b", "'q'"])
def test_a_pattern_that_is_not_plainly_one_stays_cold(hostile: str) -> None:
    got = go_warm(("go", "test", hostile, "./ok"), env())
    assert got.packages == ("./ok",)
    assert go_warm(("go", "test", hostile), env()) == GoWarm("std")  # not "." in its place


def test_only_the_variables_that_change_what_is_compiled_are_carried() -> None:
    got = go_warm(("go", "test", "./..."), env(GOFLAGS="-mod=vendor", CGO_ENABLED="0", HOME="/root",
                                               GOEXPERIMENT="$(id)", TOKEN="secret"))
    assert got.env == (("CGO_ENABLED", "0"), ("GOFLAGS", "-mod=vendor"))


def test_count_1_is_a_fidelity_row_unless_the_command_asked_for_it() -> None:
    rows = {r.fact: r for r in warm_rows(go_warm(("go", "test", "./..."), env()), ("go", "test", "./..."), env())}
    assert rows["go test results"].replayed == "never cached: -count=1"
    assert rows["cache Go build"].replayed == "warm: the standard library and ./... (with their tests) compiled in the image"
    for argv, flags in ((("go", "test", "-count=1", "./..."), env()), (("go", "test", "./..."), env(GOFLAGS="-count=1"))):
        assert "go test results" not in {r.fact for r in warm_rows(go_warm(argv, flags), argv, flags)}


def test_what_the_build_compiled_is_the_row() -> None:
    (row,) = built_rows({"std": "ok 61s 0", "packages": "failed 4s 2\nexample.com/m/broken [build failed]"})
    assert row.replayed == "warm: the standard library (61s) and 2 packages in part (4s) compiled in the image"
    assert "did not compile (stays cold): example.com/m/broken [build failed]" in row.why
    assert built_rows({}) == ()


def go_plan(warm: GoWarm) -> Plan:
    return Plan(title="t", capsule_id="c0ffee00", base=BOOKWORM, argv=("go", "test", "./..."),
                runtimes=(Runtime("go", "1.22.10", "1.22.10", "pypi", True),),
                source=Source("https://example.org/r.git", "a" * 40), go_warm=warm)


def golden(name: str, text: str) -> str:
    path = CASES / name / "Dockerfile"
    if os.environ.get("REPLAY_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path.read_text()


def test_the_go_warm_up_is_golden_and_in_json_form() -> None:
    plan = go_plan(GoWarm("test", ("./...", "example.com/m/x"), ("-race", "-vet=off"), (("GOFLAGS", "-mod=vendor"),)))
    text = render(plan, settings(), "buildkit")
    assert text == golden("go-warm", text)
    runs = [line[4:] for line in text.splitlines() if line.startswith('RUN ["env"')]
    std, packages = (json.loads(r) for r in runs)
    assert std == ["env", "GOPROXY=off", "GOFLAGS=-mod=vendor", "sh", "/opt/replay/go-warm.sh", "std", "/", "go",
                   "build", "-race", "std"]  # -vet is go test's only
    assert packages[-7:] == ["-count=1", "-exec", "/bin/true", "-race", "-vet=off", "./...", "example.com/m/x"]
    assert [step_name(f"RUN {r}") for r in runs] == ["compiling the Go standard library (once per toolchain)",
                                                   "compiling the Go packages the command names (its tests are not run)"]


def test_a_std_only_plan_compiles_the_standard_library_alone() -> None:
    text = render(go_plan(GoWarm("std")), settings(), "buildkit")
    assert "go-warm.sh\", \"std\"" in text and "go-warm.sh\", \"packages\"" not in text


def test_a_python_image_compiles_its_bytecode() -> None:
    from tests.unit.bisect.fakes import plan
    py = dataclasses.replace(plan(), runtimes=(Runtime("python", "3.11.2", "3.11.2", "debian", True),),
                             node_pins=FrozenMap())
    text = render(py, settings(), "buildkit")
    assert text == golden("python-bytecode", text)
    assert "compileall -q -j 0 /opt/venv " in text and "compileall -q -j 0 /work/repo " in text
    assert text.index("compileall -q -j 0 /work/repo") > text.index("COPY src/")


@pytest.mark.parametrize("field,value", [("packages", ("$(id)",)), ("flags", ("-race;id",)), ("mode", "run"),
                                         ("env", (("GOFLAGS", "a\nb"),))])
def test_a_plan_read_back_with_a_hostile_warm_up_is_refused(field: str, value: object) -> None:
    data = plan_to_json(go_plan(dataclasses.replace(GoWarm("test", ("./...",)), **{field: value})))
    with pytest.raises(CapsuleError):
        plan_from_json(data)
    assert plan_from_json(plan_to_json(go_plan(GoWarm("test", ("./...",))))).go_warm == GoWarm("test", ("./...",))


SCRIPT = Path(__file__).resolve().parents[3] / "templates" / "scripts" / "go-warm.sh"
FAKE_GO = """#!/bin/sh
echo "ok  \texample.com/m/a\t0.01s"
echo "?   \texample.com/m/b\t[no test files]"
echo "# example.com/m/c"
echo "c/c.go:3:1: syntax error"
echo "FAIL\texample.com/m/c [build failed]"
echo "FAIL"
exit 1
"""


def test_the_warm_up_script_goes_on_past_a_package_that_does_not_compile(tmp_path: Path) -> None:
    import subprocess
    go = tmp_path / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    out = tmp_path / "warm"
    proc = subprocess.run(["sh", str(SCRIPT), "packages", str(tmp_path), str(go), "test", "./..."],
                          env={"PATH": "/usr/bin:/bin", "REPLAY_WARM_DIR": str(out)}, capture_output=True, text=True)
    assert proc.returncode == 0  # best effort: the build goes on
    assert "c/c.go:3:1: syntax error" in proc.stderr
    head, *cold = (out / "go-packages").read_text().splitlines()
    assert head.split()[0::2] == ["failed", "2"] and cold == ["example.com/m/c [build failed]"]
    (row,) = built_rows({"std": "ok 50s 0", "packages": (out / "go-packages").read_text()})
    assert "did not compile (stays cold): example.com/m/c [build failed]" in row.why


def test_the_image_probe_reads_what_the_warm_up_wrote(tmp_path: Path) -> None:
    from runner.engine import RunResult
    from runner.replay.image import image_facts
    from tests.unit.fake_engine import FakeEngine

    probe = b'2.36\n---\n{"drift": [{"name": "x", "recorded": "1", "installed": "2"}]}\n---\n=== packages\nok 4s 3\n=== std\nok 61s 0\n'
    engine = FakeEngine(run=lambda spec: RunResult(0, probe, probe, 0.1))
    facts = image_facts(engine, dataclasses.replace(settings(), cache_dir=tmp_path), "img:warm", "r-test")
    assert facts.libc_version == "2.36" and [d.name for d in facts.drift] == ["x"]
    assert [r.replayed for r in facts.warm] == ["warm: the standard library (61s) and 3 packages (4s) compiled in the image"]
    # an image built before the warm-up (no such section): its drift read as before, no row
    old = FakeEngine(run=lambda spec: RunResult(0, b"", b'2.36\n---\n{"drift": []}\n', 0.1))
    assert image_facts(old, dataclasses.replace(settings(), cache_dir=tmp_path / "o"), "img:old", "r").warm == ()
