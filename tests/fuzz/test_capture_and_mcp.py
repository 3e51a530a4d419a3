"""The surfaces of issue 39 under the fuzzer: `replay capture`'s options and what it records
(--include-env of any name, hostile output, diff lines, file and branch names), and MCP's
marking of capsule text over mutated capsules.

capture (twin, through the CLI): a failing command is captured in a repository holding the
generated change, untracked names and branch; it must exit with the command's code (1) or,
for a bad option, 2 with one error line, never an internal error; and what it wrote must read,
inspect and verify as replay reads it (capture writes what replay reads).

MCP (each format, through the CLI's `inspect --json --all`): the envelope marked for the agent
(runner/mcp/untrusted.py) must give the envelope back when its capsule text is put back, and
replay's own text may hold no string but one of the words its schema closes a member to.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.capsules import read_capsule, verify_capsule
from runner.mcp.schemas import result_schema
from runner.mcp.untrusted import mark
from tests.examples import CI, MINIMAL, TWIN

from tests.fuzz import mutate
from tests.fuzz.conftest import examples
from tests.fuzz.harness import MAX_SECONDS, Broken, judge_line, run_cli
from tests.fuzz.tally import TALLY

GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
NAMES = st.sampled_from(("HOME", "PWD", "USER", "SSH_AUTH_SOCK", "API_TOKEN", "MY_CRED", "DB_PASS", "APP_MODE", "x=1",
                         "", "LC_ALL", "XDG_RUNTIME_DIR", "npm_config_x", "A" * 300)) | st.from_regex(
    r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)
TOKENS = st.sampled_from(("ghp_" + "Zq7Xa1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV", "https://u:pw-9x@h.example/x",
                          "password hunter22", "https://hooks.slack.com/services/T0/B0/" + "X" * 24, "MY_CRED=abcdef1"))
LINE = st.one_of(mutate.hostile_text(), TOKENS, st.text(max_size=60))
REF = st.from_regex(r"[a-z][a-z0-9_-]{0,30}(/[a-z0-9_-]{1,20})?", fullmatch=True)
FILE_NAME = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9 ._-]{0,40}", fullmatch=True).filter(lambda n: n not in (".", ".."))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-capture") / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "c.txt").write_text("base\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    return root


def _capture(repo: Path, include: list[str], value: str, output: bytes, lines: list[str], names: list[str],
             branch: str) -> bool:
    """One capture; True when it was refused (exit 2)."""
    _git(repo, "checkout", "-q", "-B", branch)
    (repo / "c.txt").write_bytes(("base\n" + "".join(f"{line}\n" for line in lines)).encode("utf-8", "surrogatepass"))
    for name in names:
        (repo / "u" / name).parent.mkdir(exist_ok=True)
        (repo / "u" / name).write_text("x")
    printed = repo.parent / "out.bin"
    printed.write_bytes(output)
    out = repo.parent / "capsule.json"
    out.unlink(missing_ok=True)
    args = ["capture", *[w for n in include for w in ("--include-env", n)], "-o", str(out), "--",
            "sh", "-c", 'cat "$0"; exit 1', str(printed)]
    cwd, saved = Path.cwd(), {n: os.environ.get(n) for n in include if n and "=" not in n}
    try:
        os.chdir(repo)
        for name in saved:
            os.environ[name] = value
        rc, _, err, took = run_cli(args, command_output=True)
    finally:
        os.chdir(cwd)
        for name, old in saved.items():
            os.environ.pop(name, None) if old is None else os.environ.__setitem__(name, old)
        shutil.rmtree(repo / "u", ignore_errors=True)
    return _judge(rc, err, took, out)


def _judge(rc: int, err: str, took: float, out: Path) -> bool:
    if took > MAX_SECONDS:
        raise Broken(f"capture took {took:.1f} s")
    if "internal error" in err or "Traceback" in err:
        raise Broken(f"capture: {err[-600:]!r}")
    if rc == 2:
        lines = [line for line in err.splitlines() if line.startswith("replay: error:")]
        if len(lines) != 1:
            raise Broken(f"capture: exit 2 without exactly one error line: {err[-400:]!r}")
        return True
    if rc != 1 or not out.is_file():
        raise Broken(f"capture: exit {rc} (the command's is 1), capsule written: {out.is_file()}: {err[-400:]!r}")
    capsule = read_capsule(out)  # a ReplayError here is an internal error of capture: it wrote what replay refuses
    if not verify_capsule(out).valid or capsule.command.exit_code != 1:
        raise Broken(f"capture wrote a capsule replay does not call valid: {verify_capsule(out).problems}")
    return False


def test_capture_of_hostile_runs_writes_what_replay_reads(repo: Path) -> None:
    key = ("twin", "capture: --include-env, output, diff, names", "CLI")

    @settings(max_examples=examples(60))
    @given(st.lists(NAMES, max_size=3), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=40),
           st.binary(max_size=3000) | LINE.map(lambda s: s.encode("utf-8", "surrogatepass")),
           st.lists(LINE, max_size=6), st.lists(FILE_NAME, max_size=3), REF)
    def one(include: list[str], value: str, output: bytes, lines: list[str], names: list[str], branch: str) -> None:
        TALLY.count(key, _capture(repo, include, value, output, lines, names, branch))

    one()
    TALLY.finished.add(key)


# -- MCP ---------------------------------------------------------------------------------

LIGHT = {k: v for k, v in mutate.TREE_CLASSES.items() if k not in ("huge strings", "many entries")}
PLACEHOLDER = re.compile(r"<capsule text #[0-9]+>")


def _closed_words(schema: Any) -> set[str]:
    """Every string an enum or const of the schema allows: all replay's own text may hold."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "enum" and isinstance(value, list):
                found |= {v for v in value if isinstance(v, str)}
            elif key == "const" and isinstance(value, str):
                found.add(value)
            else:
                found |= _closed_words(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _closed_words(value)
    return found


def _restored(shown: Any, held: dict[str, dict[str, str]]) -> Any:
    def back(text: str, member: str) -> str:
        return held[text.removeprefix("<capsule text ").removesuffix(">")][member] if PLACEHOLDER.fullmatch(text) else text

    if isinstance(shown, str):
        return back(shown, "text")
    if isinstance(shown, list):
        return [_restored(v, held) for v in shown]
    if isinstance(shown, dict):
        return {back(k, "key"): _restored(v, held) for k, v in shown.items()}
    return shown


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


INSPECT = result_schema("inspect")
WORDS = _closed_words(INSPECT)


def _marked(target: Path) -> bool:
    """inspect --json of the capsule, marked for MCP; True when inspect refused it."""
    rc, out, err, took = run_cli(["inspect", "--json", "--all", str(target)])
    if took > MAX_SECONDS or "internal error" in err or "Traceback" in err:
        raise Broken(f"inspect --json: {err[-400:]!r}")
    envelope = json.loads(out)
    marked = mark(envelope, INSPECT)
    if _restored(marked.shown, marked.block()) != envelope:
        raise Broken("the marked envelope does not give the envelope back")
    own = [s for s in _strings(marked.shown.get("result")) if not PLACEHOLDER.fullmatch(s)]
    if any(s not in WORDS for s in own):
        raise Broken(f"capsule text left unmarked in replay's own text: {[s for s in own if s not in WORDS][:5]}")
    if rc == 2:
        judge_line("inspect --json", target, envelope["error"]["message"])
    return rc == 2


@pytest.mark.parametrize(("fmt", "seed"), [("twin", TWIN), ("codeinstances", CI)])
def test_mcp_marks_the_capsule_text_of_mutated_json_capsules(fmt: str, seed: Path,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    doc = json.loads(seed.read_text(encoding="utf-8"))
    target = tmp_path_factory.mktemp("fuzz-mcp") / "capsule.json"

    @settings(max_examples=examples(50))
    @given(st.one_of(*(make(doc) for make in LIGHT.values())))
    def one(new: Any) -> None:
        target.write_bytes(mutate.json_text(new).encode("utf-8", "surrogatepass"))
        TALLY.count((fmt, "MCP: capsule text marked", "CLI"), _marked(target))

    one()
    TALLY.finished.add((fmt, "MCP: capsule text marked", "CLI"))


def test_mcp_marks_the_capsule_text_of_mutated_novafabric_runs(tmp_path_factory: pytest.TempPathFactory) -> None:
    doc = yaml.safe_load((MINIMAL / "capsule.yaml").read_text())
    target = tmp_path_factory.mktemp("fuzz-mcp") / "run"

    @settings(max_examples=examples(40))
    @given(st.one_of(*(make(doc) for make in LIGHT.values())))
    def one(new: Any) -> None:
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(MINIMAL, target)
        (target / "capsule.yaml").write_text(yaml.safe_dump(new, allow_unicode=False, width=10_000))
        TALLY.count(("novafabric", "MCP: capsule text marked", "CLI"), _marked(target))

    one()
    TALLY.finished.add(("novafabric", "MCP: capsule text marked", "CLI"))
