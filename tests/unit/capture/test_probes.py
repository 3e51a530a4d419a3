"""Host facts: versions as the tools report them, absent when missing, the OS from os-release."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.capture.probes import TOOLS, Probe, os_facts, probe, probe_all, read_os_release, version_of


@pytest.mark.parametrize(("text", "last", "want"), [
    ("v20.20.2\n", False, "20.20.2"), ("go version go1.22.10 linux/amd64", False, "1.22.10"),
    ("Python 3.11.2", False, "3.11.2"), ("pip 23.0.1 from /usr/lib/python3 (python 3.11)", False, "23.0.1"),
    ('openjdk version "17.0.19" 2026-04-21\nOpenJDK Runtime', False, "17.0.19"),
    ("gcc (Debian 12.2.0-14) 12.2.0\n", True, "12.2.0"), ("Poetry (version 1.8.3)", False, "1.8.3"),
    ("\nrustc 1.97.1 (e71f9a9a9 2026-08-01)", False, "1.97.1"), ("1.0.0-rc.1", False, "1.0.0-rc.1"),
    ("no version here", False, None),
])
def test_the_version_is_read_from_the_first_line(text: str, last: bool, want: str | None) -> None:
    assert version_of(text, last) == want


def test_a_tool_that_is_missing_or_fails_is_simply_absent(tmp_path: Path) -> None:
    assert probe_all(TOOLS, str(tmp_path), {"PATH": str(tmp_path)}) == {}
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho v1.2.3\n")
    fake.chmod(0o755)
    broken = tmp_path / "bun"
    broken.write_text("#!/bin/sh\necho 9.9.9; exit 1\n")
    broken.chmod(0o755)
    env = {"PATH": str(tmp_path)}
    assert probe(Probe(("node", "--version")), str(tmp_path), env) == "1.2.3"
    assert probe(Probe(("bun", "--version")), str(tmp_path), env) is None


def test_the_os_comes_from_os_release_and_nulls_what_it_does_not_say(tmp_path: Path) -> None:
    rel = tmp_path / "os-release"
    rel.write_text('NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n')
    assert read_os_release(rel)["VERSION_ID"] == "12"
    facts = os_facts(rel)
    assert (facts["platform"], facts["distro"], facts["distroVersion"]) == ("linux", "debian", "12")
    assert facts["arch"] in ("x64", "arm64") and facts["libc"] in ("glibc", "musl", None)
    bare = os_facts(tmp_path / "missing")
    assert (bare["distro"], bare["distroVersion"]) == (None, None)
