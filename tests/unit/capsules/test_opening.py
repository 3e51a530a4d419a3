"""One way to open a capsule (runner/capsules/opening.py): the policy per command, the name shown
(a URL as given, `<stdin>`, the path) with no replacement step, and one parse per capsule."""
from __future__ import annotations

import io
import json
import shutil
import tarfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.capsules import download, jsonload, novafabric
from runner.capsules.opening import open_capsule, read_stdin, verification
from runner.capsules.trust import Trust
from runner.cli.main import main
from runner.errors import CapsuleError, CapsuleRefused
from tests.examples import BUNDLE, NOVA, TZ_CAPSULE, json_variant
from tests.services import static_server

DANA = NOVA.parent / "dana-p256.pub.pem"
REFUSED = "does not verify (starts with 'exit7' but the run ended with 'exit1')"


@pytest.fixture(autouse=True)
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refusals come before any engine is asked; past them the engine is unreachable (exit 3)."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setenv("REPLAY_CACHE", str(tmp_path / "cache"))


def _tampered(tmp_path: Path) -> Path:
    """The tz-clock twin capsule with its recorded failure signature edited: readable, not verifying."""
    def change(d: dict[str, Any]) -> None:
        d["command"]["failure"]["signature"] = d["command"]["failure"]["signature"].replace("exit1", "exit7")

    return json_variant(TZ_CAPSULE, tmp_path, change)


def _passing(tmp_path: Path) -> Path:
    def change(d: dict[str, Any]) -> None:
        d["command"].update(exitCode=0, outcome="pass")
        d["command"].pop("failure")

    (tmp_path / "good").mkdir()
    return json_variant(TZ_CAPSULE, tmp_path / "good", change)


def _error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("replay: error:")]


BUILDING = {
    "run": lambda bad, good: [str(bad), "--repo", str(BUNDLE), "-n", "1"],
    "render": lambda bad, good: ["render", str(bad), "--repo", str(BUNDLE)],
    "shell": lambda bad, good: ["shell", str(bad), "--repo", str(BUNDLE)],
    "bisect": lambda bad, good: ["bisect", str(bad), "--good", str(good), "--repo", str(BUNDLE)],
}


@pytest.mark.parametrize("command", sorted(BUILDING))
def test_a_building_command_refuses_a_capsule_that_does_not_verify(command: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad, good = _tampered(tmp_path), _passing(tmp_path)
    args = BUILDING[command](bad, good)
    assert main(args) == 1
    errors = _error_lines(capsys)
    assert len(errors) == 1 and f"{bad}: {REFUSED}" in errors[0] and "--allow-unverified" in errors[0]
    # on request it goes on: render needs no engine (exit 0, the Dockerfile); the others get as far as it
    assert main([*args, "--allow-unverified"]) == (0 if command == "render" else 3)
    captured = capsys.readouterr()
    if command == "render":
        assert "FROM " in captured.out
    else:
        assert "no Docker engine answers" in captured.err and "does not verify" not in captured.err


def test_bisect_refuses_either_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad, good = TZ_CAPSULE, _tampered(tmp_path)  # the good end is checked too (before which way round it is)
    assert main(["bisect", str(bad), "--good", str(good), "--repo", str(BUNDLE)]) == 1
    assert f"{good}: does not verify" in _error_lines(capsys)[0]


def test_a_building_command_takes_the_trust_keys_and_require_valid(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    unsealed = tmp_path / "capsule"
    shutil.copytree(NOVA, unsealed)
    shutil.rmtree(unsealed / ".seal")
    for command in (["render"], ["shell"]):
        assert main([*command, str(unsealed), "--require-valid", "--trust-key", str(DANA)]) == 1
        assert "not replayed (--require-valid)" in _error_lines(capsys)[0]
        assert main([*command, str(unsealed), "--require-valid"]) == 2  # no key to require: usage
        assert "--require-valid needs at least one --trust-key" in _error_lines(capsys)[0]


def test_the_showing_commands_say_what_they_find_and_refuse_nothing(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = _tampered(tmp_path)
    assert main(["inspect", str(bad)]) == 0
    assert str(bad) in capsys.readouterr().out
    assert main(["diff", str(bad), str(TZ_CAPSULE)]) == 0  # the same environment
    assert "does not verify" not in capsys.readouterr().err
    assert main(["verify", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID: 1 problem") and "starts with 'exit7'" in out


def test_the_sealed_example_with_an_edited_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edited = tmp_path / "capsule"
    shutil.copytree(NOVA, edited)
    (edited / "inputs" / "poem.txt").write_text("the cat and the hat and the rat\n")
    for command in (["render"], ["shell"]):
        assert main([*command, str(edited)]) == 1
        line = _error_lines(capsys)[0]
        assert line.startswith(f"replay: error: {edited}: does not verify") and "poem.txt" in line
    assert main(["inspect", str(edited)]) == 0
    assert main(["verify", str(edited)]) == 1
    assert "poem.txt" in capsys.readouterr().out


def test_open_capsule_applies_the_policy_it_is_given(tmp_path: Path) -> None:
    bad = _tampered(tmp_path)
    with pytest.raises(CapsuleRefused, match="does not verify"):
        open_capsule(bad)
    opened = open_capsule(bad, Trust().showing())
    assert not opened.verified.valid and opened.name == str(bad) and opened.path == bad
    assert opened.capsule.provenance.path == str(bad)
    assert open_capsule(bad, Trust(allow_unverified=True)).verified == opened.verified


# -- a URL capsule is named by its URL, by the error itself ---------------------------------------

@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()
    with static_server(root) as base:
        yield base, root


def test_no_state_is_kept_about_downloaded_capsules() -> None:
    for name in ("_ORIGINS", "origin", "shown", "capsule_path"):
        assert not hasattr(download, name), name


def test_a_refused_url_capsule_is_named_by_its_url(served: tuple[str, Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    shutil.copy(_tampered(tmp_path), root / "capsule.json")
    url = f"{base}/capsule.json"
    for args in ([url, "--repo", str(BUNDLE)], ["render", url, "--repo", str(BUNDLE)], ["shell", url]):
        assert main(args) == 1
        errors = _error_lines(capsys)
        assert len(errors) == 1 and errors[0].startswith(f"replay: error: {url}: {REFUSED}"), errors
        assert str(tmp_path / "cache") not in errors[0]


def test_an_error_planning_a_url_capsule_names_the_url(served: tuple[str, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Raised by the planner about the cached copy, after opening: named by the URL all the same."""
    base, root = served
    variant = json_variant(TZ_CAPSULE, tmp_path, lambda d: d["command"].update(argv=[]))
    shutil.copy(variant, root / "empty.json")
    url = f"{base}/empty.json"
    assert main(["render", url, "--allow-unverified"]) == 2
    errors = _error_lines(capsys)
    assert len(errors) == 1 and errors[0].startswith(f"replay: error: {url}: "), errors
    assert "cache" not in errors[0]


def test_a_packed_capsule_with_an_edited_file_is_named_by_its_url(served: tuple[str, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    edited = tmp_path / NOVA.name
    shutil.copytree(NOVA, edited)
    (edited / "inputs" / "poem.txt").write_text("edited\n")
    with tarfile.open(root / "nova.tar.gz", "w:gz") as tar:
        tar.add(edited, arcname=NOVA.name)
    url = f"{base}/nova.tar.gz"
    assert main([url]) == 1
    line = _error_lines(capsys)[0]
    assert line.startswith(f"replay: error: {url}: does not verify") and "poem.txt" in line and "cache" not in line
    assert main(["verify", url, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["result"]["path"] == url


def test_a_url_capsule_in_a_report_and_in_verify_is_the_url(served: tuple[str, Path],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    base, root = served
    shutil.copy(TZ_CAPSULE, root / "tz.json")
    url = f"{base}/tz.json"
    opened = open_capsule(url)
    assert opened.name == url and opened.verified.path == url and opened.shown.provenance.path == url
    assert opened.path.is_file() and str(opened.path) != url  # the cached copy, read
    assert verification(url).path == url
    with pytest.raises(CapsuleError) as refused:
        open_capsule(f"{base}/missing.json")
    assert refused.value.path == f"{base}/missing.json"


# -- stdin ------------------------------------------------------------------------------------------

def test_stdin_is_named_stdin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = _tampered(tmp_path).read_bytes()
    assert read_stdin(io.BytesIO(data)) == data

    class Stdin:
        def __init__(self) -> None:
            self.buffer = io.BytesIO(data)

        def isatty(self) -> bool:
            return False

    monkeypatch.setattr("sys.stdin", Stdin())
    result = verification("-")
    assert result.path == "<stdin>" and not result.valid
    monkeypatch.setattr("sys.stdin", Stdin())
    with pytest.raises(CapsuleRefused, match="^<stdin>: does not verify"):
        open_capsule("-")


# -- the farm: one parse per capsule ----------------------------------------------------------------

class _Executor:
    """Every attempt reproduces the recorded failure; nothing is built (no engine)."""

    batch, resumable, together = 0, True, True

    def __init__(self) -> None:
        self.ran: list[str] = []

    def prebuild(self, plans: object) -> None: ...
    def ready(self, plan: object) -> None: ...

    def run(self, work: Any, resumed: bool = False) -> Any:
        from runner.farm.executor import Done
        from runner.verdict.judge import Attempt

        self.ran.append(work.capsule_id)
        attempt = Attempt(0, None, "exit0:aaaa", ("1",), 0.1, stdout=b"1\n", classification="recorded")
        return Done(tuple((aid, attempt) for aid in work.attempt_ids), image_digest="sha256:feed", built=True)

    def images(self) -> int: return 1
    def builds(self) -> int: return 0
    def clear_leftovers(self) -> None: ...
    def interrupt(self) -> None: ...
    def close(self) -> None: ...


def test_the_farm_parses_each_capsule_once_and_refuses_one_that_does_not_verify(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.farm.night import run_night
    from runner.farm.night_options import FarmOptions
    from runner.farm.night_progress import FarmProgress
    from runner.farm.store import SqlStore
    from tests.unit.farm.builders import write_instance

    caps = tmp_path / "caps"
    write_instance(caps / "hello.json", ["python3", "-c", "print(1)"], "1\n")
    shutil.copy(_tampered(tmp_path), caps / "tampered.json")
    shutil.copytree(NOVA, caps / "nova")
    (caps / "package.json").write_text('{"name": "not-a-capsule"}')
    parses: Counter[str] = Counter()

    def counted(real: Any, key: Any) -> Any:
        def read(path: Path, *args: Any, **kwargs: Any) -> Any:
            parses[Path(key(path)).name] += 1
            return real(path, *args, **kwargs)
        return read

    monkeypatch.setattr(jsonload, "load", counted(jsonload.load, lambda p: p))
    monkeypatch.setattr(novafabric, "_parsed", counted(novafabric._parsed, lambda root: root))
    store = SqlStore(tmp_path / "farm.sqlite")
    executor = _Executor()
    run_night(store, [caps], FarmOptions(attempts=1, max_attempts=1), FarmProgress(),
              make_executor=lambda options, replayer, progress: executor)  # type: ignore[arg-type,return-value]
    # each capsule (and the package.json passed over) read once; a NovaFabric capsule's own evidence
    # files (its redaction proof, its seal) are its reader's to read
    entries = {"hello.json", "tampered.json", "nova", "package.json"}
    assert {name: n for name, n in parses.items() if name in entries} == dict.fromkeys(entries, 1)
    results = {Path(r.path).name: r for r in store.history().nights[0].results}
    assert set(results) == {"hello.json", "tampered.json", "nova"}
    assert results["tampered.json"].verdict == "broken" and REFUSED in results["tampered.json"].reason
    assert results["tampered.json"].format == "twin"
    assert results["hello.json"].verdict != "broken" and results["nova"].verdict != "broken"
    assert len(executor.ran) == 2  # the refused capsule never reaches an executor
