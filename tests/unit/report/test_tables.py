"""Every table a command prints, piped at 80 columns: plain text (no box drawing, no
trailing space) and no identifier split across lines (a commit id, a signature, a fact
key, a path, a key id). One test per command; all go through runner.report.layout.View."""
from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

import runner.cli.housekeeping as doctor_cli
from runner.cli.main import main
from runner.machine.doctor import Check, Diagnosis
from runner.report.farm_view import show_history, show_report, show_run
from runner.report.layout import View
from runner.config import Origin
from tests.examples import NOVA, TWIN
from tests.unit.bisect.world import FakeReplayer, tz_rule, use
from tests.support.reports import sample_history, view_of
from tests.support.reports import SIG, every_verdict_night

BOX = set("─│┃━┏┓┗┛┡┩└┘├┤┬┴┼╇╋═║╔╗╚╝")
DANA_KEYID = "193eb6743a66bf9e92120204bcf7352dc5eb1ed111cf22699154d90fc39bf993"
LONG_PATH = "/var/lib/replay/" + "very-long-directory-name/" * 4 + "capsule.json"


def plain(out: str, *identifiers: str) -> str:
    lines = out.splitlines()
    assert lines, "no output"
    assert not [line for line in lines if line != line.rstrip()], out  # no trailing space
    assert not set(out) & BOX, out  # no box drawing in a pipe
    for ident in identifiers:
        assert any(ident in line for line in lines), f"{ident} is not whole on one line:\n{out}"
    return out


def piped(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    main(args)
    return capsys.readouterr().out


def console(width: int = 80) -> Console:
    return Console(file=io.StringIO(), width=width, color_system=None, highlight=False, soft_wrap=True)


def test_inspect(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plain(piped(capsys, monkeypatch, ["inspect", str(TWIN), "--all"]), "exit1:0aee0834ac9c4d2d",
          "test/ut/spec/util/time.test.ts", "America/New_York")
    out = plain(piped(capsys, monkeypatch, ["inspect", str(NOVA), "--all"]))
    digests = set(re.findall(r"\b[0-9a-f]{64}\b", out))
    assert digests and not re.search(r"(?<![0-9a-f])[0-9a-f]{20,63}(?![0-9a-f])", out)  # every digest whole


def test_verify_signers(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    out = plain(piped(capsys, monkeypatch, ["verify", str(NOVA)]), DANA_KEYID, "CN=dana@example.org")
    assert "signers" in out


def test_doctor(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    d = Diagnosis((Check("engine", "ok", "Docker 27.1 at unix:///var/run/docker.sock"),
                   Check("cache", "fail", f"cannot write {LONG_PATH}: permission denied",
                         f"chown the folder or set REPLAY_CACHE_DIR to another one than {LONG_PATH}")),
                  (Origin("REPLAY_CACHE_DIR", LONG_PATH, "environment"),), {"replay": "0.1.0"})
    monkeypatch.setattr(doctor_cli, "diagnose", lambda: d)
    out = plain(piped(capsys, monkeypatch, ["doctor"]), LONG_PATH, "REPLAY_CACHE_DIR", "unix:///var/run/docker.sock")
    assert "fix: chown the folder" in out


def test_diff(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plain(piped(capsys, monkeypatch, ["diff", str(TWIN), str(NOVA), "--all"]), "exit1:0aee0834ac9c4d2d")


def test_bisect(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    use(monkeypatch, FakeReplayer(tz_rule()))
    out = plain(piped(capsys, monkeypatch, ["bisect", "bad.json", "--good", "good.json"]), "env:TZ",
                "America/New_York", "source:commit")
    assert "trials" in out and "candidates" in out


def test_farm_run_report_and_history() -> None:
    night, view = every_verdict_night(), view_of(sample_history())
    path = view.rows[0].path
    for show, identifiers in ((lambda c: show_run(night, c), (SIG, "caps/tz/capsule.json")),
                              (lambda c: show_report(view, c, show_all=True), (path, "/srv/mirrors/app.git")),
                              (lambda c: show_history(list(night.results[:3]), c), (SIG, "night-0003"))):
        c = console()
        show(c)
        plain(c.file.getvalue(), *identifiers)  # type: ignore[attr-defined]


def test_a_view_never_splits_a_word_and_keeps_prose_in_its_column() -> None:
    c = console(40)
    view = View(c)
    view.table("t", ("key", "why"), [("env:TZ", f"a reason that wraps around {LONG_PATH} twice")], free=1)
    view.table("", ("a", "b", "c"), [(LONG_PATH, "x", "y")])  # too wide: records
    out = plain(c.file.getvalue(), LONG_PATH, "env:TZ")  # type: ignore[attr-defined]
    assert out.splitlines()[1:3] == ["key     why", "env:TZ  a reason that wraps around"]
    assert f"  {LONG_PATH}" in out.splitlines() and "    b: x" in out.splitlines()
