"""--workdir: DIR's entries mounted over the recorded source, its diff against the recorded commit."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.replay.workdir import checked, report_diff, same_repository, workdir_diff, workdir_mounts
import os
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


@pytest.mark.parametrize("kind", ["socket", "fifo"])
def test_a_socket_or_fifo_anywhere_in_dir_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    import socket as sockets

    repo = tmp_path / "r"
    git_repo(repo, {"a.txt": "one\n"})
    (repo / "sub" / "deeper").mkdir(parents=True)
    special = repo / "sub" / "deeper" / "s"
    if kind == "socket":
        server = sockets.socket(sockets.AF_UNIX)
        server.bind(str(special))
    else:
        os.mkfifo(special)
    with pytest.raises(UsageError, match=f"sub/deeper/s is a {'socket' if kind == 'socket' else 'FIFO'}; only files "
                                         "and directories are mounted") as exc:
        checked(repo)
    assert exc.value.exit_code == 2 and "\n" not in str(exc.value)
    with pytest.raises(UsageError):  # and again for every attempt (--watch): what DIR holds then
        workdir_mounts(str(repo))


def test_root_and_the_home_directory_and_what_holds_it_are_refused(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home" / "me"
    home.parent.mkdir()
    git_repo(home, {".bashrc": "x\n"})
    monkeypatch.setenv("HOME", str(home))
    for given in (Path("/"), home, home.parent):
        with pytest.raises(UsageError, match="is `/`, the home directory or holds it") as exc:
            checked(given)
        assert exc.value.exit_code == 2


def test_dir_must_be_the_root_of_a_git_checkout(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a git checkout"):
        checked(tmp_path)
    git_repo(tmp_path / "r", {"a.txt": "one\n"})
    (tmp_path / "r" / "sub").mkdir()
    with pytest.raises(UsageError, match="not the checkout's root"):
        checked(tmp_path / "r" / "sub")
    assert checked(tmp_path / "r") == (tmp_path / "r").resolve()


def test_dir_must_hold_the_recorded_commit(tmp_path: Path) -> None:
    commit = git_repo(tmp_path / "r", {"a.txt": "one\n"})
    same_repository(str(tmp_path / "r"), commit)
    same_repository(str(tmp_path / "r"), None)  # nothing recorded: nothing to hold
    with pytest.raises(UsageError, match=f"does not hold the recorded commit {'1' * 12}"):
        same_repository(str(tmp_path / "r"), "1" * 40)


def test_the_diff_shown_is_filtered_for_the_terminal(tmp_path: Path) -> None:
    commit = git_repo(tmp_path / "r", {"a.txt": "one\n"})
    (tmp_path / "r" / "a.txt").write_text("\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07two\n")
    shown_diff = report_diff([f"--workdir r: ran in place of the recorded source, changed from the recorded commit "
                              f"{commit[:12]}: 1 file changed"], str(tmp_path / "r"))
    assert "\x1b" not in shown_diff and "\x07" not in shown_diff and "\\x1b]52;c;" in shown_diff
    assert "+" in shown_diff and "\n" in shown_diff  # still a diff, line by line


@pytest.mark.usefixtures("offline_registry")
def test_without_repo_dirs_own_git_gives_the_recorded_commit(tmp_path: Path) -> None:
    from runner.build.plan import PlanOptions
    from runner.replay import ReplayOptions
    from runner.replay.loading import Loader
    from tests.examples import BUNDLE, TZ_CAPSULE

    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(checkout)], check=True, capture_output=True)
    _, plan = Loader(ReplayOptions(workdir=str(checkout), plan=PlanOptions())).load(TZ_CAPSULE)
    assert plan.source is not None and plan.source.remote == str(checkout) and plan.source.remote_from_user
    other = tmp_path / "other"
    git_repo(other, {"a.txt": "x\n"})
    with pytest.raises(UsageError, match="does not hold the recorded commit"):
        Loader(ReplayOptions(workdir=str(other), plan=PlanOptions())).load(TZ_CAPSULE)


def test_a_directory_this_user_cannot_list_is_refused_naming_it(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The container (root, DAC_OVERRIDE) lists what the user cannot: such a directory is unchecked, so refused.
    The tests run as root, who lists everything: the refusal of the listing is injected."""
    repo = tmp_path / "r"
    git_repo(repo, {"a.txt": "one\n"})
    locked = repo / "sub" / "locked"
    locked.mkdir(parents=True)
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(locked):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)  # type: ignore[call-overload]
    monkeypatch.setattr(os, "scandir", scandir)
    for check in (lambda: checked(repo), lambda: workdir_mounts(str(repo))):
        with pytest.raises(UsageError, match="sub/locked cannot be read \\(Permission denied\\)") as exc:
            check()
        assert exc.value.exit_code == 2 and "\n" not in str(exc.value)
