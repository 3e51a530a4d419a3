"""Truncated recorded diffs: what was recorded whole still applies (runner/build/sources/repo.py)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from runner.build.sources.repo import cut_to_whole_hunks

_GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
            "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _git(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    """Exit code and stdout, bytes decoded as they are (text mode would turn \r\n into \n)."""
    proc = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **_GIT_ENV}, capture_output=True,
                          input=stdin.encode() if stdin is not None else None)
    return proc.returncode, proc.stdout.decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repo whose working tree differs from HEAD in a.txt (two hunks), b.txt and c.bin."""
    lines = [f"line {i}\n" for i in range(1, 41)]
    (tmp_path / "a.txt").write_text("".join(lines))
    (tmp_path / "b.txt").write_text("one\ntwo\nthree")
    (tmp_path / "c.bin").write_bytes(bytes(range(256)))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "init")
    lines[1], lines[35] = "line 2 changed\n", "line 36 changed\r\n"
    (tmp_path / "a.txt").write_text("".join(lines))
    (tmp_path / "b.txt").write_text("one\ntwo\nthree and more")
    (tmp_path / "c.bin").write_bytes(bytes(range(255, -1, -1)))
    return tmp_path


def _diff(repo: Path) -> str:
    """The recorded diff; the working tree goes back to HEAD, where a replay applies it."""
    diff = _git(repo, "diff", "HEAD", "--binary")[1]
    _git(repo, "checkout", "-q", "--", ".")
    return diff


def _applies(repo: Path, diff: str) -> bool:
    return _git(repo, "apply", "--check", "-", stdin=diff)[0] == 0


def test_a_whole_diff_is_kept(repo: Path) -> None:
    diff = _diff(repo)
    assert "\r" in diff and "\\ No newline at end of file" in diff and "GIT binary patch" in diff
    assert cut_to_whole_hunks(diff) == (diff, None)
    assert _applies(repo, diff)


def test_a_cut_inside_the_second_hunk_keeps_the_first(repo: Path) -> None:
    cut_diff = (diff := _diff(repo))[:diff.index("+line 36 changed")]
    assert not _applies(repo, cut_diff)  # git refuses all of it: "corrupt patch"
    kept, cut = cut_to_whole_hunks(cut_diff)
    assert cut == "a.txt"
    assert "+line 2 changed" in kept and "line 36" not in kept
    assert _applies(repo, kept)


def test_a_cut_inside_a_later_file_keeps_the_earlier_files(repo: Path) -> None:
    diff = _diff(repo)
    kept, cut = cut_to_whole_hunks(diff[:diff.index("-three")])
    assert cut == "b.txt"
    assert kept == diff[:diff.index("diff --git a/b.txt")]
    assert _applies(repo, kept)


def test_a_cut_between_a_header_and_its_hunk_drops_the_header(repo: Path) -> None:
    diff = _diff(repo)
    b = diff.index("diff --git a/b.txt")
    kept, cut = cut_to_whole_hunks(diff[:diff.index("@@", b)])
    assert (kept, cut) == (diff[:b], "b.txt")


def test_a_cut_inside_a_binary_patch_drops_that_file(repo: Path) -> None:
    diff = _diff(repo)
    c = diff.index("diff --git a/c.bin")
    literal = diff.index("\n", diff.index("literal", c)) + 1
    kept, cut = cut_to_whole_hunks(diff[:literal + 5])
    assert (kept, cut) == (diff[:c], "c.bin")
    assert _applies(repo, kept)


def test_a_complete_binary_patch_is_whole(repo: Path) -> None:
    diff = _diff(repo)
    binary = diff[diff.index("diff --git a/c.bin"):]
    assert cut_to_whole_hunks(binary) == (binary, None)


def test_a_capsules_own_local_remote_is_refused(tmp_path: Path) -> None:
    """Someone else's capsule must not make replay copy a repository of this machine into an image."""
    from runner.config import Settings
    from runner.build.sources.content import content_store
    from runner.errors import NeedsInput
    from runner.build.plan import Source
    from runner.build.sources.repo import restore

    src = Source(remote=str(tmp_path), commit="a" * 40)
    with pytest.raises(NeedsInput, match="--repo"):
        restore(src, Settings(cache_dir=tmp_path / "cache"), tmp_path / "out", content_store(tmp_path / "cache"))
    with pytest.raises(NeedsInput):
        restore(Source(remote="file:///etc", commit="a" * 40), Settings(cache_dir=tmp_path / "cache"), tmp_path / "o2",
                content_store(tmp_path / "cache"))


@pytest.mark.parametrize("commit", ["--output=/tmp/x", "HEAD; rm -rf /", "main", ""])
def test_only_commit_ids_reach_git(commit: str, tmp_path: Path) -> None:
    from runner.errors import SourceUnavailable
    from runner.build.sources.repo import check_commit

    with pytest.raises(SourceUnavailable):
        check_commit(commit)


def test_credentials_never_reach_messages() -> None:
    from runner.build.sources.repo import RemoteFailed

    assert str(RemoteFailed("https://sam:t0ken@git.example.com/x.git", "does not answer")) == \
        'the capsule\'s remote "https://git.example.com/x.git" does not answer'


def test_a_source_dir_holding_the_cache_is_not_copied_into_itself(tmp_path: Path) -> None:
    from runner.build.sources.content import content_store
    from runner.build.plan import Source
    from runner.config import Settings
    from runner.build.sources.repo import restore

    (tmp_path / "app.js").write_text("x")
    (tmp_path / "node_modules" / "m").mkdir(parents=True)
    store = content_store(tmp_path / "cache")  # the content store lives inside --source
    tree = store.put_tree(tmp_path)
    assert store.put_tree(tmp_path) == tree  # deterministic: the same tree, the same digest
    dest = tmp_path / "out" / "src"
    restore(Source(remote=None, commit=None, local_tree=tree), Settings(cache_dir=tmp_path / "cache"), dest, store)
    assert (dest / "app.js").read_text() == "x"
    assert not (dest / "cache").exists() and not (dest / "node_modules").exists()


# -- a remote that cannot give the commit: one line, the remote cut and escaped, never git's words --

def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: connecting to it is refused at once
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mirror_of(tmp_path: Path, remote: str, commit: str = "a" * 40, trusted: bool = False) -> None:
    from runner.config import Settings
    from runner.build.sources.repo import _mirror

    _mirror(Settings(cache_dir=tmp_path / "cache"), remote, commit, trusted)


def test_an_unreachable_remote_is_one_line_exit_3_without_its_credentials(tmp_path: Path) -> None:
    from runner.errors import Exit
    from runner.build.sources.repo import RemoteFailed

    remote = f"http://sam:t0ken-9f2@127.0.0.1:{_closed_port()}/team/repo.git"
    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, remote)
    line = info.value.naming(tmp_path / "capsule.json").line()
    assert info.value.exit_code == Exit.ENVIRONMENT
    assert line.startswith(f"{tmp_path / 'capsule.json'}: the capsule's remote \"http://127.0.0.1:")
    assert "cannot be cloned: no connection (pass --repo" in line
    assert "t0ken" not in line and "sam" not in line
    assert "\n" not in line and "fatal" not in line  # replay's words, not git's
    assert not list((tmp_path / "cache" / "repos").glob("clone-*"))  # no half-written clone left


def test_a_remote_holding_control_characters_is_escaped_and_bad_input(tmp_path: Path) -> None:
    from runner.errors import Exit
    from runner.build.sources.repo import RemoteFailed

    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, f"http://sam:t0ken-9f2@127.0.0.1:{_closed_port()}/\x1b[2Jrepo.git")
    line = info.value.line()
    assert info.value.exit_code == Exit.BAD_INPUT and "its URL is malformed" in line
    assert "\x1b" not in line and "\\x1b[2J" in line and "t0ken" not in line


def test_a_long_remote_is_cut(tmp_path: Path) -> None:
    from runner.build.sources.repo import RemoteFailed

    remote = f"http://127.0.0.1:{_closed_port()}/" + "x" * 5000 + ".git"
    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, remote)
    assert len(info.value.line()) < 400 and "…" in info.value.line()


def test_a_commit_the_remote_does_not_have_is_bad_input_exit_2(tmp_path: Path) -> None:
    from runner.errors import Exit
    from runner.build.sources.repo import RemoteFailed

    upstream = tmp_path / "upstream"
    upstream.mkdir()
    (upstream / "f").write_text("x")
    _git(upstream, "init", "-q")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-q", "-m", "init")
    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, str(upstream), "b" * 40, trusted=True)
    assert info.value.exit_code == Exit.BAD_INPUT
    assert f"commit {'b' * 40} is not in it" in info.value.line()


def test_an_option_like_remote_is_refused_as_bad_input(tmp_path: Path) -> None:
    from runner.errors import Exit
    from runner.build.sources.repo import RemoteFailed

    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, "--upload-pack=touch /tmp/pwned")
    assert info.value.exit_code == Exit.BAD_INPUT and "looks like an option" in info.value.line()


def test_render_names_the_capsule_and_its_remote(offline_registry: None, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main
    from tests.examples import TZ_CAPSULE, json_variant

    remote = f"https://sam:t0ken-9f2@127.0.0.1:{_closed_port()}/team/app.git"

    def change(d: dict[str, object]) -> None:
        d["repo"]["remote"] = remote  # type: ignore[index]

    capsule = json_variant(TZ_CAPSULE, tmp_path, change)
    rc = main(["render", str(capsule), "-o", str(tmp_path / "ctx")])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 3, err
    assert len(lines) == 1 and str(capsule) in lines[0] and "https://127.0.0.1:" in lines[0], err
    assert "t0ken" not in err and "Traceback" not in err
    assert not (tmp_path / "ctx").exists()  # no half-written build context


def _dns_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: git's clone fails as it does when no name resolves (a DNS outage), with
    no query leaving this machine."""
    from runner.build.sources import repo

    real = repo._git

    def git(args: list[str], cwd: Path | None = None, check: bool = True,
            stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        if args[0] == "clone":
            return subprocess.CompletedProcess(args, 128, b"", b"fatal: unable to access "
                                               b"'https://git.example.com/team/repo.git/': Could not resolve host: "
                                               b"git.example.com\n")
        return real(args, cwd, check, stdin)

    monkeypatch.setattr(repo, "_git", git)


def test_a_capsule_remote_whose_host_is_not_found_is_the_environments_exit_3_with_the_hint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.errors import Exit
    from runner.build.sources.repo import RemoteFailed
    from runner.farm.verdict import unjudged

    _dns_down(monkeypatch)
    for trusted in (False, True):  # the capsule's own remote, or one --repo named
        with pytest.raises(RemoteFailed) as info:
            _mirror_of(tmp_path, "https://git.example.com/team/repo.git", trusted=trusted)
        assert info.value.exit_code == Exit.ENVIRONMENT and info.value.fault == "environment"
        line = info.value.line()
        assert "cannot be cloned: host not found (pass --repo PATH_OR_URL or --mirror PREFIX=PATH_OR_URL" in line
        # a DNS outage turns a farm's night into infra errors (retried next night), not broken capsules
        assert unjudged(info.value)[0] == "infra-error"


def test_a_capsule_remote_that_refuses_the_connection_is_an_infra_error_in_the_farm(tmp_path: Path) -> None:
    from runner.build.sources.repo import RemoteFailed
    from runner.farm.verdict import unjudged

    with pytest.raises(RemoteFailed) as info:
        _mirror_of(tmp_path, f"https://127.0.0.1:{_closed_port()}/team/repo.git")
    assert "no connection (pass --repo PATH_OR_URL or --mirror" in info.value.line()
    assert unjudged(info.value) == ("infra-error", info.value.line())


def test_a_capsule_with_a_commit_but_no_remote_is_usage_exit_2_with_the_repo_hint(
        offline_registry: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli.main import main
    from runner.farm.verdict import unjudged
    from runner.build.sources.repo import NoRemote
    from tests.examples import TZ_CAPSULE, json_variant

    def change(d: dict[str, object]) -> None:
        d["repo"]["remote"] = None  # type: ignore[index]

    capsule = json_variant(TZ_CAPSULE, tmp_path, change)
    rc = main(["render", str(capsule), "-o", str(tmp_path / "ctx")])
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1, lines
    assert str(capsule) in lines[0] and "records commit" in lines[0] and "but no remote" in lines[0]
    assert "pass --repo PATH_OR_URL" in lines[0] and not (tmp_path / "ctx").exists()
    assert unjudged(NoRemote("abc1234"))[0] == "broken"  # in a farm: the capsule's own (a --repo serves it)
