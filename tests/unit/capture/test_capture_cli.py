"""`replay capture` end to end in this process: exit codes, --only-on-failure, the capsule as
every reader sees it, "not recorded" where the host cannot say, and no secret in the file."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from runner.capsules import read_capsule, verify_capsule
from runner.capsules.twin import read
from runner.capture import CaptureOptions, capture
from runner.capture.execute import RunResult
from runner.cli.main import main
from runner.verdict import signature as sig
from tests.envelope import result_of

GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_failing_command_exits_with_its_code_and_its_capsule_reads_and_verifies(
        here: Path, capfd: pytest.CaptureFixture[str]) -> None:
    rc = main(["capture", "-o", "c.json", "--", *py("import sys; print('Error: boom'); sys.exit(5)")])
    out, err = capfd.readouterr()
    assert rc == 5 and "Error: boom" in out and "capsule written to c.json" in err
    capsule = read(here / "c.json")
    assert (capsule.command.exit_code, capsule.command.outcome) == (5, "fail")
    assert capsule.command.failure is not None and capsule.command.failure.key_lines == ("Error: boom",)
    assert capsule.command.failure.signature.startswith("exit5:")
    result = verify_capsule(here / "c.json")
    assert result.valid and not [p for p in result.problems if p.severity == "warning"], result.problems
    assert read_capsule(here / "c.json").provenance.generator.startswith("replay ")
    assert main(["inspect", "c.json"]) == 0


def test_outside_a_repo_the_repo_is_null_and_cwd_is_dot(here: Path) -> None:
    assert main(["capture", "-q", "--", "true"]) == 0
    doc = json.loads((here / "capsule.json").read_text())
    assert doc["repo"] is None and doc["command"]["cwd"] == "." and doc["command"]["failure"] is None
    assert doc["packageManagers"] == [] and doc["resolved"] == {}


def test_without_git_on_path_nothing_about_the_repo_is_guessed(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(here, "init", "-q")
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    assert main(["capture", "-q", "--", sys.executable, "-c", "pass"]) == 0
    doc = json.loads((here / "capsule.json").read_text())
    assert doc["repo"] is None and "git" not in doc["tools"] and "node" not in doc["runtimes"]


def test_a_signal_exits_128_plus_n(here: Path) -> None:
    assert main(["capture", "-q", "--", "sh", "-c", "kill -TERM $$"]) == 143
    doc = json.loads((here / "capsule.json").read_text())
    assert (doc["command"]["exitCode"], doc["command"]["signal"]) == (None, "SIGTERM")
    assert doc["command"]["failure"]["signature"].startswith("SIGTERM:")


def test_only_on_failure_writes_nothing_on_a_pass_and_the_capsule_on_a_fail(here: Path) -> None:
    assert main(["capture", "--only-on-failure", "-o", "c.json", "--", "true"]) == 0
    assert not (here / "c.json").exists()
    assert main(["capture", "--only-on-failure", "-o", "c.json", "--", "false"]) == 1
    assert json.loads((here / "c.json").read_text())["command"]["outcome"] == "fail"


RUNS = ["touch", "ran"]


@pytest.mark.parametrize("args", [[], ["--"], ["-o", "nowhere/c.json", "--", *RUNS], ["-o", ".", "--", *RUNS],
                                  ["--format", "nova", "--", *RUNS], ["--no-such-option", "--", *RUNS],
                                  ["--include-env", "A=1", "--", *RUNS]])
def test_a_usage_error_exits_2_before_the_command_runs(here: Path, args: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", *args]) == 2
    assert not (here / "ran").exists() and "replay: error:" in capsys.readouterr().err


def test_a_capsule_that_cannot_be_written_is_exit_3_when_the_command_passed(
        here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "d").mkdir()
    assert main(["capture", "-o", "d/c.json", "--", "rm", "-r", "d"]) == 3  # the command takes the directory away
    (err_line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("replay: error:")]
    assert "d/c.json: cannot write the capsule" in err_line
    (here / "d").mkdir()
    assert main(["capture", "-o", "d/c.json", "--", "sh", "-c", "rm -r d; exit 4"]) == 4  # its code wins


def test_options_after_the_double_dash_are_the_commands(here: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["capture", "-q", "--", sys.executable, "-c", "import sys; print(sys.argv[1:])", "--debug",
                 "--json", "-o", "x"]) == 0
    assert "['--debug', '--json', '-o', 'x']" in capfd.readouterr().out
    assert json.loads((here / "capsule.json").read_text())["command"]["argv"][-4:] == ["--debug", "--json", "-o", "x"]


def test_git_state_is_recorded_with_cwd_relative_to_the_root(here: Path) -> None:
    repo = here / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "remote", "add", "origin", "https://bob:hunter22@git.example.com/acme/app.git")
    (repo / "a.txt").write_text("two\n")
    (repo / "new.txt").write_text("x")
    (repo / "package-lock.json").write_text("{}")
    os.chdir(repo / "sub")
    assert main(["capture", "-q", "-o", str(repo / "capsule.json"), "--", "true"]) == 0
    doc = json.loads((repo / "capsule.json").read_text())
    r = doc["repo"]
    assert r["remote"] == "https://git.example.com/acme/app.git" and r["branch"] == "main"
    assert r["commit"] == git(repo, "rev-parse", "HEAD").strip() and r["dirty"] is True
    assert "-one\n+two" in r["diff"] and r["untracked"] == ["new.txt", "package-lock.json"]  # not its own capsule
    assert doc["command"]["cwd"] == "sub"
    assert doc["packageManagers"][0]["lockfile"] == "package-lock.json"
    os.chdir(here)
    git(repo, "checkout", "-q", "--detach")
    os.chdir(repo)
    assert main(["capture", "-q", "-o", str(here / "detached.json"), "--", "true"]) == 0
    assert json.loads((here / "detached.json").read_text())["repo"]["branch"] is None


def test_no_secret_reaches_the_capsule(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A marker in the environment, in the diff, in an untracked file's name and in the output."""
    token = "ghp_" + uuid.uuid4().hex + "Zq7X"  # twin's rules know its shape
    plain = f"pw-{uuid.uuid4().hex}"  # a value with no telling shape, held by a secret-named variable
    repo = here / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "config.txt").write_text("nothing yet\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "config.txt").write_text(f"token = {token}\npassword: {plain}\n")
    (repo / "blob.bin").write_bytes(b"\x00\x02" + token.encode() + b"\xff")
    (repo / f"notes-{token}.txt").write_text("x")
    monkeypatch.setenv("API_TOKEN", token)
    monkeypatch.setenv("DB_PASSWORD", plain)
    monkeypatch.setenv("SOME_URL", f"https://user:{plain}@db.example.com/x")
    monkeypatch.chdir(repo)
    code = "import os, sys; print('Error:', os.environ['API_TOKEN'], os.environ['DB_PASSWORD']); sys.exit(1)"
    rc = main(["capture", "-q", "--include-env", "SOME_URL", "-o", str(here / "c.json"), "--", *py(code), token])
    assert rc == 1
    data = (here / "c.json").read_bytes()
    assert token.encode() not in data and plain.encode() not in data
    doc = json.loads(data)
    assert doc["repo"]["diffRedacted"] is True and doc["repo"]["untracked"][0].startswith("notes-<redacted:")
    assert doc["env"]["API_TOKEN"] == {"state": "set"} and doc["env"]["SOME_URL"]["value"] == "https://db.example.com/x"
    assert "<redacted:" in doc["command"]["failure"]["outputTail"] and doc["command"]["argv"][-1].startswith("<redacted:")
    assert doc["redaction"]["scrubbed"]["env-value"] >= 3 and doc["redaction"]["rulesVersion"] == 2
    assert doc["redaction"]["diffOmitted"] == ["blob.bin"] and "GIT binary patch" not in doc["repo"]["diff"]
    assert verify_capsule(here / "c.json").valid


@pytest.mark.parametrize("name", ["MY_SIGNING_KEY", "DB_PASS", "PASSPHRASE", "GITHUB_TOKEN", "SENTRY_DSN"])
def test_include_env_of_a_secret_named_variable_is_refused_in_one_line_before_the_command_runs(
        here: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(name, "s3cr3tvalue123")
    assert main(["capture", "--include-env", name, "-o", "c.json", "--", *RUNS]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"replay: error: --include-env {name}: its name says it holds a secret")
    assert "s3cr3tvalue123" not in line and not (here / "ran").exists() and not (here / "c.json").exists()


def test_oldpwd_is_a_path_not_a_secret_so_argv_stays_runnable(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (here / "t.sh").write_text("exit 3\n")
    monkeypatch.setenv("OLDPWD", str(here))
    monkeypatch.setenv("PWD", str(here))
    assert main(["capture", "-q", "-o", "c.json", "--", "sh", str(here / "t.sh")]) == 3
    assert json.loads((here / "c.json").read_text())["command"]["argv"] == ["sh", str(here / "t.sh")]


def fake_run(output: str, code: int = 1) -> Callable[[Sequence[str]], RunResult]:
    return lambda argv: RunResult(code, None, 5, output)


def test_the_output_is_scrubbed_before_it_is_cut_to_the_tail(here: Path) -> None:
    """A private key whose BEGIN line falls before the 200-line tail and a token the 64,000-character
    cut would halve: neither leaves a piece behind."""
    body = [f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:04d}abcdefghijklmnopqrstuvwx" for i in range(100)]
    key = ["-----BEGIN PRIVATE KEY-----", *body, "-----END PRIVATE KEY-----"]
    lines = [f"line {i}" for i in range(300)] + key + [f"after {i}" for i in range(150)] + ["Error: boom"]
    doc = capture(["t"], CaptureOptions(output=here / "k.json"), {}, fake_run("\n".join(lines) + "\n")).doc
    tail = doc["command"]["failure"]["outputTail"]
    assert len(tail.splitlines()) == 200 and tail.splitlines()[-1] == "Error: boom"
    assert "<redacted:private-key>" in tail and not any(b[:36] in tail for b in body)
    token = "ghp_" + "Zq7Xa1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"
    output = "start\n" + token + "\n" + "y" * (sig.TAIL_CHARS - 31)
    doc = capture(["t"], CaptureOptions(output=here / "t.json"), {}, fake_run(output)).doc
    tail = doc["command"]["failure"]["outputTail"]
    assert token[10:] not in tail and tail.endswith("y" * 100)  # the cut's own text is still there
    assert doc["redaction"]["scrubbed"]["github-token"] == 1


def test_a_key_the_program_died_printing_and_a_traced_password_leave_nothing_in_the_tail(here: Path) -> None:
    """No END line (the program died mid-key) with the BEGIN line before the tail; a `set -x` trace."""
    body = [f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:04d}abcdefghijklmnopqrstuvwx" for i in range(250)]
    lines = ["-----BEGIN PRIVATE KEY-----", *body, "+ docker login --password hunter2-pw reg", "Error: killed"]
    doc = capture(["t"], CaptureOptions(output=here / "k.json"), {}, fake_run("\n".join(lines) + "\n")).doc
    tail = doc["command"]["failure"]["outputTail"]
    assert not any(b[:36] in tail for b in body) and "hunter2-pw" not in tail
    assert tail == "<redacted:private-key>\n+ docker login --password <redacted:option-value> reg\nError: killed\n"
    assert doc["redaction"]["scrubbed"] == {"option-value": 1, "private-key": 1}


def test_stderr_says_what_was_redacted_and_which_values_were_not_recorded(
        here: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("APP_LANG", "de")
    monkeypatch.setenv("API_TOKEN", "tok-s3cr3t-123")
    rc = main(["capture", "-o", "c.json", "--", "sh", "-c", 'echo "Error: $API_TOKEN"; exit 1', "--password", "pw"])
    err = capfd.readouterr().err.splitlines()
    assert rc == 1 and "tok-s3cr3t-123" not in "\n".join(err)
    (said,) = [ln for ln in err if ln.startswith("replay capture: redacted ")]
    assert "env-value 1" in said and "option-value 1" in said
    (hint,) = [ln for ln in err if ln.startswith("replay capture: recorded without a value: ")]
    assert "APP_LANG" in hint and "--include-env NAME" in hint and "--env NAME=VALUE" in hint
    assert "API_TOKEN" not in hint.split(";")[0].split("(")[0]  # a secret is not offered for --include-env
    assert main(["capture", "-o", "p.json", "--", "true"]) == 0
    assert not [ln for ln in capfd.readouterr().err.splitlines() if "recorded without a value" in ln]


def test_term_and_ci_are_recorded_with_their_values_and_diff_compares_them(
        here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("CI", "true")
    assert main(["capture", "-q", "-o", "dumb.json", "--", "false"]) == 1
    doc = json.loads((here / "dumb.json").read_text())
    assert doc["env"]["TERM"] == {"state": "set", "value": "dumb"} and doc["env"]["CI"]["value"] == "true"
    assert read(here / "dumb.json").env["TERM"].value == "dumb"  # where the twin reader finds it
    monkeypatch.delenv("TERM")
    assert main(["capture", "-q", "-o", "plain.json", "--", "false"]) == 1
    capsys.readouterr()
    assert main(["diff", "dumb.json", "plain.json", "--json"]) == 1
    result = result_of(capsys.readouterr().out)
    (term,) = [d for d in result["differences"] if d["key"] == "env:TERM"]
    assert "dumb" in json.dumps(term) and not [n for n in result["not_comparable"] if n["key"] == "env:TERM"]
    old = json.loads((here / "plain.json").read_text())
    old["redaction"]["rulesVersion"] = 1
    del old["env"]["TERM"]
    (here / "old.json").write_text(json.dumps(old))
    main(["diff", "dumb.json", "old.json", "--json"])
    (lone,) = [n for n in result_of(capsys.readouterr().out)["not_comparable"] if n["key"] == "env:TERM"]
    assert lone["note"] == "twin records TERM's value since its rules version 2; this capsule's are older"
