"""`replay render -o DIR`: all or nothing, names --repo, and the lines that replay by hand."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from runner.replay import byhand as render_cli
from runner.replay.byhand import MARKER
from runner.cli.main import main
from tests.examples import BUNDLE, TZ_CAPSULE, json_variant


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))


def test_an_unreachable_remote_leaves_nothing_and_names_repo(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ctx"
    rc = main(["render", str(TZ_CAPSULE), "-o", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 3  # its host is not found: the environment's (a DNS outage looks the same), with the --repo hint
    assert len(err) == 1 and "--repo" in err[0] and "git.example.com" in err[0]
    assert not out.exists()


def test_a_failure_after_a_previous_context_removes_it_too(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ctx"
    assert main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE)]) == 0
    assert (out / "Dockerfile").is_file()
    capsys.readouterr()
    assert main(["render", str(TZ_CAPSULE), "-o", str(out)]) == 3
    assert not out.exists()


def test_the_by_hand_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "my ctx"
    rc = main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE), "--env", "API_TOKEN=hunter2"])
    captured = capsys.readouterr()
    assert rc == 0
    build, run = captured.out.strip().splitlines()
    assert shlex.split(build)[-1] == str(out) and "docker build" in build
    words = shlex.split(run)
    recorded = json.loads(TZ_CAPSULE.read_text())["command"]["argv"]
    assert words[:2] == ["docker", "run"] and "--network=none" in words
    assert "TZ=America/New_York" in words and words[-len(recorded):] == recorded
    assert "API_TOKEN" in words and "hunter2" not in captured.out + captured.err  # by name: never printed


def test_render_json_is_the_envelope_with_the_dockerfile_and_with_o_the_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.envelope import envelope_of
    from runner.schemas import schema
    import jsonschema

    assert main(["render", str(TZ_CAPSULE), "--json"]) == 0
    dry = envelope_of(capsys.readouterr().out)
    assert (dry["schema"], dry["exit_code"], dry["error"]) == ("replay.render/1", 0, None)
    assert dry["result"]["dockerfile"].startswith("# syntax") or "FROM " in dry["result"]["dockerfile"]
    assert (dry["result"]["context"], dry["result"]["build_line"], dry["result"]["builder"]) == (None, None, "classic")
    out = tmp_path / "ctx"
    assert main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE), "--json"]) == 0
    captured = capsys.readouterr()
    wrote = envelope_of(captured.out)["result"]
    assert wrote["context"] == str(out) and (out / "Dockerfile").read_text() == wrote["dockerfile"]
    assert shlex.split(wrote["build_line"])[-1] == str(out) and shlex.split(wrote["run_line"])[:2] == ["docker", "run"]
    assert any(n.startswith("build context written to") for n in wrote["notes"])
    assert captured.err == ""  # the notes are in the JSON, not on stderr
    jsonschema.validate(wrote, schema("render"))
    assert main(["render", str(tmp_path / "nope.json"), "--json"]) == 2
    assert envelope_of(capsys.readouterr().out)["error"]["kind"] == "capsule"


def test_capsule_values_are_quoted_in_the_run_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(data: dict) -> None:  # type: ignore[type-arg]
        data["command"]["argv"] = ["node", "-e", "console.log('$(rm -rf /)'); process.exit(1)"]

    capsule = json_variant(TZ_CAPSULE, tmp_path, change)
    assert main(["render", str(capsule), "-o", str(tmp_path / "ctx"), "--repo", str(BUNDLE)]) == 0
    run = capsys.readouterr().out.strip().splitlines()[-1]
    assert shlex.split(run)[-3:] == ["node", "-e", "console.log('$(rm -rf /)'); process.exit(1)"]


@pytest.mark.parametrize("checkout,hint", [(True, "scripts/setup"), (False, "replay doctor")])
def test_the_base_image_hint_fits_the_installation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch, checkout: bool, hint: str) -> None:
    monkeypatch.setattr(render_cli, "source_checkout", lambda: checkout)
    assert main(["render", str(TZ_CAPSULE), "-o", str(tmp_path / "ctx"), "--repo", str(BUNDLE)]) == 0
    err = capsys.readouterr().err
    assert hint in err and (checkout or "scripts/setup" not in err)


# --- -o DIR: only a directory replay wrote is ever replaced ---------------------------------


@pytest.mark.parametrize("kind", ["link to a directory", "dangling link", "file"])
def test_an_output_that_is_a_link_or_a_file_is_one_usage_line(tmp_path: Path, kind: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    target, out = tmp_path / "real", tmp_path / "ctx"
    if kind == "file":
        out.write_text("mine")
    else:
        if kind == "link to a directory":
            target.mkdir()
            (target / "replay-tools").mkdir()  # looks like a context: still never followed
        out.symlink_to(target)
    rc = main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and str(out) in err[0]
    assert "internal error" not in err[0]
    assert out.is_symlink() or out.read_text() == "mine"
    if kind == "link to a directory":
        assert (target / "replay-tools").is_dir()


def test_a_directory_holding_replay_tools_but_no_marker_is_not_replaced(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ctx"
    (out / "replay-tools").mkdir(parents=True)
    (out / "thesis.tex").write_text("years of work")
    assert main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE)]) == 2
    assert "not written by `replay render`" in capsys.readouterr().err
    assert (out / "thesis.tex").read_text() == "years of work"


def test_a_context_render_wrote_is_replaced_by_the_next_render(tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    assert main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE)]) == 0
    assert (out / MARKER).is_file()
    (out / "stale").write_text("from the first render")
    assert main(["render", str(TZ_CAPSULE), "-o", str(out), "--repo", str(BUNDLE)]) == 0
    assert (out / "Dockerfile").is_file() and not (out / "stale").exists()


# ESC (a window title, then clear the scrollback), BEL, NUL, a C1 control (CSI), a bidi override, U+2028
HOSTILE_ARG = "x\x1b]0;owned\x07\x1b[3J\x00\x9b2J\u202etxt.js\u2028y"
RAW = set(HOSTILE_ARG) - set("x]0;owned[3J2Jtxt.jsy")


def _hostile_argv(data: dict[str, object]) -> None:
    data["command"]["argv"].append(HOSTILE_ARG)  # type: ignore[index]


def test_render_shows_a_hostile_argv_escaped_in_the_title(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsule = json_variant(TZ_CAPSULE, tmp_path, _hostile_argv)
    assert main(["render", str(capsule), "--repo", str(BUNDLE)]) == 0
    out = capsys.readouterr().out
    assert not RAW & set(out)
    title = out.splitlines()[0]
    assert title.startswith("# replay ") and "\\x1b]0;owned\\x07" in title and "\\u202e" in title


def test_render_o_writes_the_run_line_with_controls_as_bash_escapes(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    capsule = json_variant(TZ_CAPSULE, tmp_path, _hostile_argv)
    assert main(["render", str(capsule), "-o", str(tmp_path / "ctx"), "--repo", str(BUNDLE)]) == 0
    captured = capsys.readouterr()
    assert not RAW & set(captured.out + captured.err)
    run_line = next(line for line in captured.out.splitlines() if line.startswith("docker run"))
    word = run_line.rsplit(" ", 1)[1]
    assert word.startswith("$'") and "\\x1b" in word
    # bash reads it back as the recorded bytes (NUL aside: no argv string can hold one)
    said = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
    assert said == HOSTILE_ARG.split("\x00")[0].encode()
