"""--workdir: DIR's entries mounted over the recorded source, its diff against the recorded commit."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.replay.workdir import checked, workdir_diff, workdir_mounts
import subprocess


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def git_repo(path: Path, files: dict[str, str]) -> str:
    path.mkdir()
    git(path, "init", "-q")
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return git(path, "rev-parse", "HEAD").strip()


def test_each_entry_but_git_and_node_modules_is_mounted_read_only_over_the_source(tmp_path: Path) -> None:
    for name in ("src", ".git", "node_modules"):
        (tmp_path / name).mkdir()
    (tmp_path / "package.json").write_text("{}")
    mounts = workdir_mounts(str(tmp_path))
    assert [(m.target, m.read_only) for m in mounts] == [("/work/repo/package.json", True), ("/work/repo/src", True)]
    assert workdir_mounts(None) == ()


def test_a_workdir_that_is_no_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a directory"):
        checked(tmp_path / "nope")


def test_the_diff_is_against_the_recorded_commit(tmp_path: Path) -> None:
    commit = git_repo(tmp_path / "r", {"a.txt": "one\n"})
    (tmp_path / "r" / "a.txt").write_text("two\n")
    d = workdir_diff(str(tmp_path / "r"), commit)
    assert "-one\n+two" in d.diff and "1 file changed" in d.stat
    assert "changed from the recorded commit" in d.note("r", commit)
    git(tmp_path / "r", "checkout", "-q", "a.txt")
    assert workdir_diff(str(tmp_path / "r"), commit).note("r", commit).endswith(f"unchanged from the recorded commit {commit[:12]}")


def test_no_diff_says_why(tmp_path: Path) -> None:
    d = workdir_diff(str(tmp_path), "0" * 40)
    assert d.problem and "no diff against" in d.note(str(tmp_path), "0" * 40)


def test_a_link_out_of_the_checkout_is_never_mounted(tmp_path: Path) -> None:
    """A bind mount follows a host symlink: a link leading out of DIR (or nowhere) would show the
    container a host path, or fail every attempt; one inside DIR is fine."""
    (tmp_path / "secrets").mkdir()
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "home").symlink_to(tmp_path / "secrets")
    (work / "up").symlink_to("..")
    (work / "dangling").symlink_to(tmp_path / "gone")
    (work / "lib").symlink_to("src")
    assert [m.target for m in workdir_mounts(str(work))] == ["/work/repo/lib", "/work/repo/src"]


@pytest.mark.parametrize("given", [{"patch": "diff --git a/x b/x\n"}, {"ref": "a" * 40}, {"source_dir": "/src"}])
def test_a_workdir_does_not_go_with_another_source(given: dict[str, str]) -> None:
    """DIR is mounted over the source on both sides of a fix check: the verdict would mean nothing."""
    from runner.build.plan import PlanOptions
    from runner.replay import ReplayOptions

    with pytest.raises(UsageError, match="--workdir"):
        ReplayOptions(workdir="/w", plan=PlanOptions(**given))  # type: ignore[arg-type]


def test_keep_does_not_go_with_the_debugger_or_the_watch() -> None:
    from runner.replay import Progress, ReplayOptions
    from runner.replay.interactive import interactive

    for how in ({"debugger": True, "watching": False}, {"debugger": False, "watching": True}):
        with pytest.raises(UsageError, match="--keep"):
            interactive("c.json", ReplayOptions(keep=True, workdir="/w", attempts=1), Progress(), print,
                        port=None, as_json=False, **how)
