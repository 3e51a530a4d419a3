"""The after-it-reproduces surfaces' options, fuzzed through the `replay` command in-process (no engine:
each case is refused before one is needed): --workdir (text, `/`, the home directory, a checkout
holding a socket or a FIFO, a folder inside a checkout), --debugger-port and its company, `shell
--kept` ids. Each is exit 2 with exactly one error line, never an internal error or a raw ESC."""
from __future__ import annotations

import os
import re
import socket
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.examples import BUNDLE, TZ_CAPSULE
from tests.fuzz.conftest import examples
from tests.fuzz.harness import MAX_SECONDS, Broken, run_cli


def refused_in_one_line(args: list[str]) -> str:
    rc, out, err, took = run_cli(args)
    shown = " ".join(a[:40] for a in args)
    if took > MAX_SECONDS:
        raise Broken(f"replay {shown} took {took:.1f} s")
    if "internal error" in err or "Traceback" in err or "\x1b" in out or "\x1b" in err:
        raise Broken(f"replay {shown}: {err[:400]!r}")
    lines = err.strip().splitlines()
    if rc != 2 or len(lines) != 1 or not lines[0].startswith("replay: error:"):
        raise Broken(f"replay {shown}: exit {rc}, not one error line: {err[:400]!r}")
    return lines[0]


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("fuzz-after")
    made: dict[str, Path] = {}
    for kind in ("socket", "fifo", "inside"):
        checkout = base / kind
        subprocess.run(["git", "clone", "-q", str(BUNDLE), str(checkout)], check=True, capture_output=True)
        made[kind] = checkout
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(made["socket"] / "src" / "agent.sock"))
    os.mkfifo(made["fifo"] / "pipe")
    made["inside"] = made["inside"] / "src"
    made["plain"] = base / "plain"
    made["plain"].mkdir()
    return made


WORKDIR_KINDS = ("socket", "fifo", "inside", "plain", "root", "home", "missing")


def test_workdir_values_are_refused_in_one_line(dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(dirs["plain"]))

    @settings(max_examples=examples(60))
    @given(st.sampled_from(WORKDIR_KINDS), st.text(max_size=40), st.sampled_from([[], ["--watch", "-n", "1"]]))
    def one(kind: str, noise: str, watch: list[str]) -> None:
        given_dir = {"root": "/", "home": str(dirs["plain"]), "missing": f"/nonexistent/{noise}"}.get(kind)
        path = given_dir if given_dir is not None else str(dirs[kind])
        if "\0" in path:
            return
        refused_in_one_line([str(TZ_CAPSULE), "--repo", str(BUNDLE), "--workdir", path, *watch])
    one()


def test_debugger_options_are_refused_in_one_line() -> None:
    @settings(max_examples=examples(60))
    @given(st.one_of(st.integers(-10, 70000).map(str), st.text(max_size=12)),
           st.sampled_from([["--json"], ["--watch"], ["--keep"], []]), st.booleans())
    def one(port: str, other: list[str], debugger: bool) -> None:
        if debugger and not other and port.isdigit() and 1 <= int(port) <= 65535:
            return  # a valid request: it would need the engine
        if "\0" in port:
            return
        refused_in_one_line([str(TZ_CAPSULE), *(["--debugger"] if debugger else []), "--debugger-port", port, *other])
    one()


def test_shell_kept_ids_that_are_no_id_are_refused_in_one_line() -> None:
    @settings(max_examples=examples(60))
    @given(st.text(max_size=70))
    def one(given_id: str) -> None:
        if re.fullmatch(r"[0-9a-f]{4,64}", given_id) or "\0" in given_id:
            return  # an id: the engine is asked
        refused_in_one_line(["shell", "--kept", given_id])
    one()
