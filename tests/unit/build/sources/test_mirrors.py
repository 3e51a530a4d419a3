"""Mirrors per remote (runner/build/sources/mirrors.py): the rewrite as git's insteadOf, the rules'
spelling, the mirrors file, and the fetch and shipping of a source through them (real git)."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.sources import mirrors
from runner.build.sources.content import content_store
from runner.build.sources.mirrors import Mirror, Mirrors, parse_rule, parse_rules, read_file
from runner.build.plan import Source
from runner.build.sources.repo import fetch_location, restore, ship_tree
from runner.cli.main import main
from runner.config import Settings
from runner.errors import UsageError

ROOT = Path(__file__).resolve().parents[4]
_GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


@pytest.fixture(autouse=True)
def no_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(mirrors.ENV, raising=False)
    mirrors.use(Mirrors())
    yield
    mirrors.use(Mirrors())


def rules(*pairs: tuple[str, str]) -> Mirrors:
    return Mirrors(tuple(Mirror(p, t, "--mirror") for p, t in pairs))


# -- the rewrite ---------------------------------------------------------------------------

def test_the_longest_matching_prefix_is_replaced_and_the_rest_kept() -> None:
    m = rules(("https://git.corp/", "https://mirror.local/corp/"), ("https://git.corp/team/", "/srv/team/"))
    assert m.rewrite("https://git.corp/team/app.git") == "/srv/team/app.git"
    assert m.rewrite("https://git.corp/other/lib.git") == "https://mirror.local/corp/other/lib.git"
    assert m.rewrite("https://github.com/x/y.git") is None
    assert m.rewrite("https://git.corp") is None  # a prefix is matched whole, as git does


def test_between_equal_prefixes_the_first_given_wins() -> None:
    m = rules(("git@host:", "/a/"), ("git@host:", "/b/"))
    assert m.rewrite("git@host:x.git") == "/a/x.git"
    assert (rules(("git@host:", "/cli/")) + rules(("git@host:", "/file/"))).rewrite("git@host:y") == "/cli/y"


def test_a_whole_remote_as_prefix_names_one_repository(tmp_path: Path) -> None:
    bundle = tmp_path / "app.bundle"
    bundle.write_bytes(b"")
    rule = parse_rule(f"https://git.corp/app.git={bundle}", "--mirror")
    assert rule.rewrite("https://git.corp/app.git") == str(bundle.resolve()) and rule.local


# -- the spelling ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, says", [
    ("https://git.corp/", "expected PREFIX=PATH_OR_URL"),
    ("=https://mirror/", "expected PREFIX=PATH_OR_URL"),
    ("https://git.corp/=", "expected PREFIX=PATH_OR_URL"),
    ("https://git.corp/=-uupload-pack=x", "looks like an option"),
    ("https://git.corp/=ext::sh -c x", "spaces and control characters"),
    ("https://git.corp/=ext::sh", "transport is not one of"),
    ("https://git.corp/=ftp://mirror/", "transport is not one of"),
    ("https://git.corp/\n=https://m/", "spaces and control characters"),
    ("https://git.corp/=/no/such/dir/", "no such clone, bundle or directory"),
])
def test_a_bad_rule_is_one_line_naming_it(text: str, says: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_rule(text, "--mirror")
    assert says in err.value.message and "\n" not in err.value.message
    assert err.value.message.startswith("--mirror ")


def test_url_targets_are_kept_as_given_and_local_ones_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mirrors").mkdir()
    monkeypatch.chdir(tmp_path)
    got = parse_rules(["https://a/=ssh://git@m/a/", "https://b/=mirrors/", "https://c/=git@m:c/"])
    assert [r.target for r in got.rules] == ["ssh://git@m/a/", f"{tmp_path}/mirrors/", "git@m:c/"]
    assert [r.local for r in got.rules] == [False, True, False]


# -- the mirrors file ------------------------------------------------------------------------

def test_the_file_skips_comments_and_resolves_paths_beside_itself(tmp_path: Path) -> None:
    (tmp_path / "repos").mkdir()
    f = tmp_path / "mirrors.txt"
    f.write_text("# corp mirrors\n\nhttps://git.corp/=repos/\n  git@host:=https://m/host/  \n")
    got = read_file(f)
    assert [(r.prefix, r.target) for r in got.rules] == [("https://git.corp/", f"{tmp_path}/repos/"),
                                                         ("git@host:", "https://m/host/")]
    assert got.rules[0].origin == f"REPLAY_MIRRORS {f}:3"


def test_a_bad_file_line_names_the_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "mirrors.txt"
    f.write_text("https://ok/=https://m/\nno equals sign here\n")
    with pytest.raises(UsageError, match=rf"REPLAY_MIRRORS {f}:2 .*expected PREFIX=PATH_OR_URL"):
        read_file(f)
    with pytest.raises(UsageError, match="cannot be read"):
        read_file(tmp_path / "missing.txt")


def test_command_line_rules_come_before_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "mirrors.txt"
    f.write_text("https://git.corp/=https://file-mirror/\nhttps://other/=https://o/\n")
    monkeypatch.setenv(mirrors.ENV, str(f))
    mirrors.use(parse_rules(["https://git.corp/=https://cli-mirror/"]))
    assert mirrors.configured().rewrite("https://git.corp/x") == "https://cli-mirror/x"
    assert mirrors.configured().rewrite("https://other/y") == "https://o/y"


def test_repo_wins_over_every_mirror() -> None:
    mirrors.use(rules(("https://git.corp/", "https://m/")))
    assert fetch_location("/home/me/clone", trusted=True) == ("/home/me/clone", None)
    url, rule = fetch_location("https://git.corp/app.git", trusted=False)
    assert url == "https://m/app.git" and rule is not None


@pytest.mark.parametrize("flag", ["https://git.corp/", "https://git.corp/=/no/such/path"])
def test_a_bad_mirror_flag_is_exit_2_in_one_line(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    capsule = ROOT / "examples" / "tz-clock" / "capsule.json"
    assert main(["run", str(capsule), "--mirror", flag]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--mirror" in err, err


# -- the fetch through a mirror, and the tree a coordinator ships --------------------------------

def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **_GIT_ENV}, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture
def bare(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "hello.txt").write_text("from the mirror\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "init")
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "mirror.git"))
    return tmp_path / "mirror.git", _git(work, "rev-parse", "HEAD").strip()


def test_an_unreachable_remote_is_restored_from_its_local_mirror(bare: tuple[Path, str], tmp_path: Path) -> None:
    mirror, commit = bare
    remote = "https://unreachable.invalid/team/app.git"
    mirrors.use(parse_rules([f"https://unreachable.invalid/team/app.git={mirror}"]))
    s = Settings(cache_dir=tmp_path / "cache")
    got = restore(Source(remote=remote, commit=commit), s, tmp_path / "src", content_store(s.cache_dir))
    assert (tmp_path / "src" / "hello.txt").read_text() == "from the mirror\n"
    assert got.commit == commit and any("mirror" in n and "--mirror" in n for n in got.notes)


def test_a_local_mirrors_tree_is_shipped_and_restored_without_the_path(bare: tuple[Path, str], tmp_path: Path) -> None:
    mirror, commit = bare
    remote = "https://unreachable.invalid/app.git"
    src = Source(remote=remote, commit=commit)
    coordinator = Settings(cache_dir=tmp_path / "coordinator")
    store = content_store(coordinator.cache_dir)
    assert ship_tree(src, coordinator, store) is None  # no rule: the worker fetches it itself
    mirrors.use(parse_rules([f"https://unreachable.invalid/={mirror.parent}/"]))
    with pytest.raises(Exception, match="cannot be cloned through the mirror"):
        ship_tree(src, coordinator, store)  # .../app.git is not there: the mirror is named
    mirrors.use(parse_rules([f"{remote}={mirror}"]))
    tree = ship_tree(src, coordinator, store)
    assert tree is not None and ship_tree(src, coordinator, store) == tree

    mirrors.use(Mirrors())  # the worker: no rule, no path; only what the coordinator sent
    worker = content_store(tmp_path / "worker")
    worker.load(store.export([tree]))
    worker.put_source(remote, commit, tree)
    got = restore(src, Settings(cache_dir=tmp_path / "worker"), tmp_path / "src", worker)
    assert (tmp_path / "src" / "hello.txt").read_text() == "from the mirror\n" and got.commit == commit


def test_a_url_mirror_is_not_shipped(bare: tuple[Path, str], tmp_path: Path) -> None:
    _, commit = bare
    mirrors.use(parse_rules(["https://unreachable.invalid/=https://mirror.invalid/"]))
    s = Settings(cache_dir=tmp_path / "c")
    assert ship_tree(Source(remote="https://unreachable.invalid/a.git", commit=commit), s, content_store(s.cache_dir)) is None
