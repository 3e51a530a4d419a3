"""Mirrors per remote on the real engine: a night of two capsules whose recorded remotes are
unreachable, each served by its own local mirror (a git bundle named by --mirror, a bare
repository under a directory named by the REPLAY_MIRRORS file)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.sources import mirrors
from runner.build.sources.mirrors import Mirrors
from tests.integration.helpers import farm_json, own_image_repo
from tests.envelope import result_of
from tests.integration.helpers import REMOTE_A, make_night

pytestmark = pytest.mark.integration

@pytest.fixture(autouse=True)
def own_images(engine: object) -> Iterator[str]:
    with own_image_repo(engine, "replay-test-mirrors") as repo:
        yield repo


@pytest.fixture(autouse=True)
def no_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(mirrors.ENV, raising=False)
    yield
    mirrors.use(Mirrors())  # the in-process CLI's --mirror rules end with the test


@pytest.fixture
def night(tmp_path: Path) -> tuple[Path, Path, Path]:
    return make_night(tmp_path)


def test_each_capsule_of_a_night_is_served_by_its_own_mirror(night: tuple[Path, Path, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    caps, bundle, bare_dir = night
    rules = tmp_path / "mirrors.txt"
    rules.write_text(f"# the B host's repositories, all of them\nhttps://git-b.unreachable.invalid/={bare_dir.name}/\n")
    monkeypatch.setenv(mirrors.ENV, str(rules))  # relative to the file
    rc, result = farm_json("run", caps, "--db", tmp_path / "farm.sqlite", "--mirror", f"{REMOTE_A}={bundle}")
    assert rc == 0, result
    assert sorted((Path(r["path"]).name, r["verdict"]) for r in result["results"]) == \
        [("a.json", "reproduced"), ("b.json", "reproduced")]


def test_without_a_mirror_the_remote_not_found_is_one_line_exit_3(night: tuple[Path, Path, Path],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main

    caps, bundle, _ = night
    # its host is not found: the environment's (a DNS outage looks the same), with the --mirror hint
    assert main(["run", str(caps / "a.json"), "--quiet"]) == 3
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot be cloned" in err and "--mirror" in err, err
    assert main(["run", str(caps / "a.json"), "--mirror", f"{REMOTE_A}={bundle}", "--json"]) == 0
    report = result_of(capsys.readouterr().out)
    assert report["verdict"] == "reproduced"
    assert any("fetched from the mirror" in n for n in report["notes"]), report["notes"]


def test_repo_still_wins_over_every_mirror(night: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main

    caps, bundle, bare_dir = night
    # --repo serves capsule b from a's bundle, which lacks b's commit: the mirror that has it is not asked
    assert main(["run", str(caps / "b.json"), "--repo", str(bundle),
                 "--mirror", f"https://git-b.unreachable.invalid/={bare_dir}/"]) == 2
    assert "is not in it" in capsys.readouterr().err
