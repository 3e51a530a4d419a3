"""Regressions of what the fuzzer and issue 9 found: each was an internal error, a hang,
or a raw control character on the terminal."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from runner.build.sources.baseimage import _vkey
from runner.capsules import read_capsule
from runner.build.clock import parse_rfc3339
from runner.errors import CapsuleError
from runner.build.sources.providers.versions import is_release, vkey
from tests.examples import CI, MINIMAL, NOVA, TWIN, json_variant
from tests.fuzz.harness import offline_registries, run_cli


@pytest.fixture
def offline() -> object:
    with offline_registries():
        yield


def twin_variant(tmp_path: Path, change) -> Path:  # type: ignore[no-untyped-def]
    return json_variant(TWIN, tmp_path, change)


def error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replay: error: "), err
    return lines[0]


# --- the known crashes --------------------------------------------------------------


def test_non_ascii_digits_in_a_version_are_not_numbers() -> None:
    assert _vkey("2.\u00b3\u2076") == (2,)
    assert vkey("2.\u00b3\u2076") == (2,) and vkey("\u00b3") == ()
    assert not is_release("1.\u00b3")
    assert _vkey("2." + "9" * 5000) == (2,)  # not a ValueError from int()


def test_a_version_with_superscript_digits_renders(tmp_path: Path, offline: object) -> None:
    path = twin_variant(tmp_path, lambda d: d["os"].update(libcVersion="2.\u00b3\u2076", distro="alpine"))
    rc, out, err, _ = run_cli(["render", str(path), "--allow-unverified"])  # the renderer's part, past verification
    assert rc in (0, 2) and "internal error" not in err, err


@pytest.mark.parametrize("text", ["2026-01-01T00:00:00+99:00", "2026-01-01T00:00:00+05:99", "9999-12-31T23:59:59-23:59",
                                  "0001-01-01T00:00:00+23:59", "\u0662\u0660\u0662\u0666-01-01T00:00:00Z"])
def test_unusual_utc_offsets_are_not_times(text: str) -> None:
    assert parse_rfc3339(text) is None


def test_a_recorded_clock_with_an_odd_offset_renders(tmp_path: Path, offline: object) -> None:
    path = json_variant(CI, tmp_path, lambda d: d.update(values=[{"seq": 1, "kind": "clock", "value": "2026-01-01T00:00:00+99:00"}]))
    rc, out, err, _ = run_cli(["render", str(path), "--allow-unverified"])  # the edit breaks the id: verify says so
    assert "internal error" not in err and rc in (0, 2), err


def test_an_input_that_is_a_fifo_is_refused_when_read(tmp_path: Path) -> None:
    root = tmp_path / "nova"
    shutil.copytree(NOVA, root)
    (root / "inputs" / "poem.txt").unlink()
    os.mkfifo(root / "inputs" / "poem.txt")
    with pytest.raises(CapsuleError) as info:
        read_capsule(root)
    assert info.value.line() == f"{root}/capsule.yaml: inputs[1].path: inputs/poem.txt is not a regular file"


def test_a_missing_input_is_refused_when_read(tmp_path: Path) -> None:
    root = tmp_path / "nova"
    shutil.copytree(NOVA, root)
    (root / "inputs" / "poem.txt").unlink()
    with pytest.raises(CapsuleError) as info:
        read_capsule(root)
    assert info.value.line() == f"{root}/capsule.yaml: inputs[1].path: inputs/poem.txt is missing"


def test_render_o_of_a_capsule_with_a_fifo_input_is_one_line(tmp_path: Path, offline: object) -> None:
    root = tmp_path / "nova"
    shutil.copytree(NOVA, root)
    (root / "inputs" / "poem.txt").unlink()
    os.mkfifo(root / "inputs" / "poem.txt")
    rc, _, err, took = run_cli(["render", str(root), "-o", str(tmp_path / "ctx")])
    assert rc == 2 and "is not a regular file" in error_line(err) and took < 10


# --- output a capsule controls -------------------------------------------------------


def test_an_escape_in_argv_never_reaches_the_terminal(tmp_path: Path) -> None:
    path = twin_variant(tmp_path, lambda d: d["command"]["argv"].append("\x1b[2J\x1b]0;pwned\x07"))
    for args in (["inspect", str(path)], ["diff", str(path), str(TWIN)]):
        rc, out, err, _ = run_cli(args)
        assert rc in (0, 1) and "\x1b" not in out and "\\x1b[2J" in out, (args, err)


def test_a_lone_surrogate_in_a_codeinstances_body_prints(tmp_path: Path) -> None:
    path = json_variant(CI, tmp_path, lambda d: d["result"]["stdout"].update(text="hi \ud800"))
    for args in (["inspect", str(path)], ["inspect", "--json", str(path)], ["verify", "--json", str(path)]):
        rc, out, err, _ = run_cli(args)
        assert "internal error" not in err and rc in (0, 1), (args, err)


def test_an_error_line_never_echoes_a_huge_value(tmp_path: Path, offline: object) -> None:
    path = twin_variant(tmp_path, lambda d: d["runtimes"].update(node="2." + "3" * 2_400_000))
    rc, _, err, _ = run_cli(["inspect", str(path)])
    line = error_line(err)
    assert rc == 2 and len(line) < 300 and "over the limit of 8,192" in line


def test_a_huge_number_is_cut_with_an_ellipsis(tmp_path: Path) -> None:
    path = twin_variant(tmp_path, lambda d: d["command"].update(durationMs=10**4000))
    rc, _, err, _ = run_cli(["inspect", str(path)])
    assert rc == 2 and "…" in error_line(err) and len(error_line(err)) < 300


# --- bounded work ---------------------------------------------------------------------


def test_a_million_env_facts_are_refused_fast(tmp_path: Path) -> None:
    doc = json.loads(TWIN.read_text())
    doc["env"] = {f"E{i}": {"state": "absent"} for i in range(10**6)}
    path = tmp_path / "million.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    started = time.monotonic()
    rc, _, err, _ = run_cli(["inspect", str(path)])
    assert rc == 2 and "over the limit" in error_line(err)
    assert time.monotonic() - started < 5


def test_env_facts_over_the_cap_are_refused_naming_it(tmp_path: Path) -> None:
    path = twin_variant(tmp_path, lambda d: d.update(env={f"E{i}": {"state": "absent"} for i in range(4_097)}))
    with pytest.raises(CapsuleError, match=r"env: 4,097 variables, over the limit of 4,096"):
        read_capsule(path)


@pytest.mark.timeout(300)
def test_a_capsule_at_the_caps_is_read_inspected_and_rendered_within_the_time_bound(tmp_path: Path, offline: object) -> None:
    def at_caps(d: dict) -> None:  # type: ignore[type-arg]
        d["env"] = {f"E{i}": {"state": "set", "value": "v" * 20} for i in range(4_096)}
        d["resolved"] = {"node": {f"@scope/pkg-{i}": ["1.0.0"] for i in range(50_000)}}
        d["repo"]["untracked"] = [f"file-{i}" for i in range(200)]
        d["repo"]["diff"] = ("+x\n" * 66_666)[:200_000]
        d["command"]["failure"]["outputTail"] = ("line\n" * 12_800)[:64_000]
    path = twin_variant(tmp_path, at_caps)
    for args in (["inspect", "--all"], ["verify"], ["render", "--allow-unverified"], ["diff"]):
        rc, _, err, took = run_cli([*args, str(path), *([str(TWIN)] if args == ["diff"] else [])])
        # a bound against runaway (quadratic) work, with room for a loaded 2-core machine: ~2 s when quiet
        assert rc in (0, 1) and took < 60, (args, rc, err[:300], took)


def test_a_huge_tz_value_is_refused(tmp_path: Path) -> None:
    path = twin_variant(tmp_path, lambda d: d["locale"].update(timeZone="America/New_York\n" * 200_000))
    with pytest.raises(CapsuleError, match=r"locale.timeZone: 3,400,000 characters, over the limit of 256"):
        read_capsule(path)


def test_a_huge_argv_string_is_refused(tmp_path: Path) -> None:
    path = twin_variant(tmp_path, lambda d: d["command"]["argv"].append("x" * 5_000_000))
    with pytest.raises(CapsuleError, match=r"command.argv: 5,000,\d+ characters of arguments, over the limit"):
        read_capsule(path)


def test_the_minimal_novafabric_capsule_still_reads() -> None:
    assert read_capsule(MINIMAL).command.argv


def test_the_report_layout_escapes_what_a_capsule_controls() -> None:
    import io

    from rich.console import Console

    from runner.report.layout import View

    console = Console(file=io.StringIO(), width=120, force_terminal=True)
    view = View(console)
    view.line("argv: npx \x1b[2J\ud800")
    view.table("", ("key", "value"), [("argv", "a\x1b]0;pwned\x07")])
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "\\x1b[2J" in shown and "\\x07" in shown and "\\ud800" in shown
    assert "\x1b[2J" not in shown and "\x07" not in shown
