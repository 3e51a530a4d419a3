"""The CLI edge: the implicit `run`, one-line errors, exit codes."""
from __future__ import annotations

import json
import re

from pathlib import Path

import pytest

from runner.cli.main import main
from runner.commands.words import normal_argv as _argv
from tests.examples import TZ_CAPSULE


@pytest.mark.parametrize("args,expected", [
    (["capsule.json"], ["run", "capsule.json"]),
    (["--env", "TZ=UTC", "capsule.json"], ["run", "--env", "TZ=UTC", "capsule.json"]),
    (["capsule.json", "-n", "1"], ["run", "capsule.json", "-n", "1"]),
    (["inspect", "capsule.json"], ["inspect", "capsule.json"]),
    (["--help"], ["--help"]),
    ([], []),
])
def test_implicit_run(args: list[str], expected: list[str]) -> None:
    assert _argv(args) == expected


def test_missing_capsule_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = main(["inspect", str(tmp_path / "nope.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and "nope.json" in err[0] and "Traceback" not in err[0]


def test_garbage_capsule_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\x00\xff\xfe garbage")
    rc = main([str(bad), "-n", "1"])
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert rc == 2 and len(err) == 1 and "bad.json" in err[0]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("replay ")


def test_no_engine_is_one_line_exit_3(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                      tmp_path: Path) -> None:
    """Replay never installs anything itself: without an engine it says how to start one."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    capsule = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "codeinstances" / "fetch-greeting.json"
    rc = main([str(capsule), "-n", "1"])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
    assert rc == 3
    assert len(errors) == 1 and "scripts/setup" in errors[0]


def test_a_tampered_capsule_is_refused_before_building(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No engine is needed to refuse: verification comes first (the engine is made unreachable to prove it)."""
    import shutil

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    sealed = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "novafabric" / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"
    copy = tmp_path / "capsule"
    shutil.copytree(sealed, copy)
    (copy / "inputs" / "poem.txt").write_text("the cat and the hat and the rat\n")
    dana = sealed.parent / "dana-p256.pub.pem"
    for flags in ([], ["--require-valid", "--trust-key", str(dana)]):
        rc = main([str(copy), *flags])
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
        assert rc == 1
        assert len(errors) == 1 and "does not verify" in errors[0] and "poem.txt" in errors[0]
        assert "--allow-unverified" in errors[0]
    # replayed anyway on request: it gets as far as the (unreachable) engine
    assert main([str(copy), "--allow-unverified"]) == 3


TZ = Path(__file__).resolve().parents[3] / "examples" / "tz-clock" / "capsule.json"


@pytest.mark.parametrize("args,needle", [
    (["diff", str(TZ)], "Missing argument"),
    (["run", str(TZ), "-n", "0"], "--attempts"),
    (["--bogus"], "No such option"),
    ([str(TZ), "--ref", "notasha"], "expected a commit id (7-64 hex digits)"),
    ([str(TZ), "--repo", "/nonexistent/clone"], "no such clone"),
    ([str(TZ), "--source", "/tmp", "--repo", "/tmp"], "does not go with --repo"),
    ([str(TZ), "--memory", "banana"], "--memory"),
    ([str(TZ), "--timeout", "-1"], "--timeout"),
    (["signature", str(TZ), "--signal", "NOTASIG"], "not a signal name"),
])
def test_usage_errors_are_one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    rc = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("replay: error:") and needle in err[0]


def test_require_valid_with_a_trust_key_needs_a_trusted_signature(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Deleting the seal must not get a capsule past --require-valid --trust-key."""
    import shutil

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    examples = Path(__file__).resolve().parents[2] / "fixtures" / "examples" / "novafabric"
    copy = tmp_path / "capsule"
    shutil.copytree(examples / "01JC4Q7W9Z2M5N8P3R6T1V0X4B", copy)
    shutil.rmtree(copy / ".seal")
    rc = main([str(copy), "--require-valid", "--trust-key", str(examples / "dana-p256.pub.pem")])
    assert rc == 1
    assert "does not verify" in capsys.readouterr().err


def test_an_empty_command_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    data = json.loads(TZ.read_text())
    data["command"]["argv"] = []
    capsule = tmp_path / "empty.json"
    capsule.write_text(json.dumps(data))
    rc = main(["render", str(capsule)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "empty argv" in err[0]


def test_columns_set_before_a_command_takes_effect(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli import console

    monkeypatch.setenv("COLUMNS", "61")
    main(["inspect", str(TZ_CAPSULE)])
    capsys.readouterr()
    assert console.out.width == 61


def test_a_command_loads_its_own_module_only() -> None:
    """`replay farm history` does not pay for the builder: a fresh interpreter running a farm
    command has imported no planner, engine or bisect module."""
    import subprocess
    import sys

    code = ("import sys; from runner.cli.main import main; main(['farm', 'report', '--db', sys.argv[1]]); "
            "print(sorted(m for m in sys.modules if m.startswith(('runner.build.planner', 'runner.engine', "
            "'runner.bisect', 'runner.cli.bisect', 'runner.cli.replaying'))))")
    done = subprocess.run([sys.executable, "-c", code, "/nonexistent/farm.sqlite"], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from runner.commands.catalog import top_words

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    listed = {m.group(1) for m in re.finditer(r"^\W*([a-z]+) {2,}[A-Z]", out.split("Commands", 1)[1], re.M)}
    assert listed == set(top_words())  # each command a row of its own in the Commands panel, none missing


# --- every path error is one line naming the file, exit 2 ------------------------------------------

LONG = "n" * 300  # a path component over NAME_MAX (255 bytes): ENAMETOOLONG on every file call


def _path_cases(tmp: Path) -> list[tuple[list[str], str]]:
    long, loop = str(tmp / LONG), str(tmp / "loop")
    from tests.examples import BUNDLE
    return [
        ([long], long), ([long + "/capsule.json"], long),
        (["inspect", long], long), (["inspect", loop], loop), (["inspect", "--json", long], long),
        (["verify", long], long), (["verify", loop], loop),
        (["render", long], long), (["diff", long, str(TZ_CAPSULE)], long), (["diff", str(TZ_CAPSULE), loop], loop),
        (["shell", long], long), (["bisect", long, "--good", str(TZ_CAPSULE)], long),
        (["render", str(TZ_CAPSULE), "-o", long, "--repo", str(BUNDLE)], long),
        (["render", str(TZ_CAPSULE), "-o", long + "/ctx", "--repo", str(BUNDLE)], long),
        (["verify", str(TZ_CAPSULE), "--trust-key", long], long),
        (["farm", "report", "--db", long], long),
        (["farm", "run", long, "--db", str(tmp / "h.db")], long),
    ]


@pytest.mark.parametrize("index", range(17))
def test_a_path_the_file_system_refuses_is_one_line_exit_2(index: int, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))
    (tmp_path / "loop").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop")
    cases = _path_cases(tmp_path)
    assert len(cases) == 17
    args, named = cases[index]
    rc = main(args)
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if line.startswith("replay: error:")]
    assert rc == 2, (args, captured.err[-500:])
    assert len(err) == 1 and named.split("/")[-1][:40] in err[0], err
    assert "internal error" not in captured.err and "Traceback" not in captured.err
    problem = "longer than the file system allows" if named.endswith(LONG) else "symlink loop"
    assert problem in err[0]
    if "--json" in args:
        error = json.loads(captured.out)["error"]
        assert error["kind"] == "path" and error["file"].endswith(LONG)


def test_capture_to_a_path_the_file_system_refuses_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    rc = main(["capture", "-o", str(tmp_path / LONG / "c.json"), "--", "true"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]
    assert rc == 2 and len(err) == 1 and LONG[:40] in err[0] and "longer than the file system allows" in err[0]


@pytest.mark.parametrize(("key", "problem"), [
    ("/dev/zero", "not a regular file"),
    ("DIR", "a directory"),
    ("MISSING", "no such file or directory"),
    ("TEXT", "not a PEM public key or certificate"),
])
def test_a_trust_key_that_is_no_key_says_what_is_wrong(key: str, problem: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    paths = {"DIR": tmp_path, "MISSING": tmp_path / "nokey.pem", "TEXT": tmp_path / "notes.txt"}
    (tmp_path / "notes.txt").write_text("hello\n")
    path = str(paths.get(key, key))
    rc = main(["verify", str(TZ_CAPSULE), "--trust-key", path])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and f"--trust-key {path}: {problem}" in err[0], err
