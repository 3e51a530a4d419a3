"""The repo's diff as capture records it, on real git repositories: text hunks scrubbed (a
tracked `.env` too), binary and UTF-16 changes left out and named, never base85; what is
left applies; the remote masked."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from runner.capture import gitdiff
from runner.capture.gitstate import repo_facts, work_tree
from runner.capture.scrub import Scrubber

GIT_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
TOKEN = "ghp_" + "Zq7Xa1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, capture_output=True,
                          text=True).stdout


def repo(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for name, data in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    return path


def facts(path: Path, env: dict[str, str] | None = None) -> tuple[dict[str, object], Scrubber]:
    tree = work_tree(path)
    assert tree is not None
    scrub = Scrubber(env or {}, None)
    return repo_facts(tree, scrub), scrub


def test_a_tracked_env_file_is_scrubbed_and_binary_and_utf16_changes_are_left_out_and_named(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", {".env": b"ENCRYPTION_KEY=old-value-1\n", "logo.bin": b"\x00\x01\x02",
                              "notes-utf16.txt": "hello\n".encode("utf-16"), "a b/odd \"name\".bin": b"\x00",
                              "app.py": b"x = 1\n"})
    (r / ".env").write_bytes(f"ENCRYPTION_KEY=k3y-{TOKEN[4:20]}\n".encode())
    (r / "logo.bin").write_bytes(b"\x00\x02" + TOKEN.encode() + b"\xff")
    (r / "notes-utf16.txt").write_bytes(f"token {TOKEN}\n".encode("utf-16"))
    (r / "a b/odd \"name\".bin").write_bytes(b"\x00" + TOKEN.encode())
    (r / "app.py").write_bytes(b"x = 2\n")
    got, scrub = facts(r)
    diff = str(got["diff"])
    assert TOKEN[4:20] not in diff and TOKEN not in diff and "old-value-1" not in diff
    assert "+ENCRYPTION_KEY=<redacted:assignment>" in diff and "-x = 1\n+x = 2" in diff
    assert "GIT binary patch" not in diff and "Binary files" not in diff and "logo.bin" not in diff
    assert sorted(scrub.omitted) == ['a b/odd "name".bin', "logo.bin", "notes-utf16.txt"]
    assert got["diffRedacted"] is True and got["dirty"] is True


def test_what_is_left_once_binary_files_are_out_still_applies(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", {"data.bin": b"\x00\x01", "app.py": b"x = 1\n"})
    (r / "data.bin").write_bytes(b"\x00\x02")
    (r / "app.py").write_bytes(b"x = 2\n")
    git(r, "mv", "app.py", "main.py")
    got, scrub = facts(r)
    assert scrub.omitted == ["data.bin"] and got["diffRedacted"] is True
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(r), str(clone))
    (clone / "fix.patch").write_text(str(got["diff"]))
    git(clone, "apply", "fix.patch")
    assert (clone / "main.py").read_text() == "x = 2\n" and (clone / "data.bin").read_bytes() == b"\x00\x01"


def test_a_clean_text_change_is_not_called_redacted(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", {"app.py": b"x = 1\n"})
    (r / "app.py").write_bytes(b"x = 2\n")
    got, scrub = facts(r)
    assert got["diffRedacted"] is False and scrub.omitted == [] and scrub.scrubbed() == {}


def test_the_remote_loses_its_credentials_and_its_query_token(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", {"a": b"1\n"})
    git(r, "remote", "add", "origin", "https://bob:hunter22@gitlab.example.com/o/r.git?private_token=glpat-abcdefghij0123456789")
    got, scrub = facts(r)
    assert got["remote"] == "https://gitlab.example.com/o/r.git?private_token=***"
    assert scrub.scrubbed() == {"url-credentials": 1}  # counted, as every replacement is


def test_the_remote_goes_through_every_rule_not_only_the_urls(tmp_path: Path) -> None:
    r = repo(tmp_path / "r", {"a": b"1\n"})
    git(r, "remote", "add", "origin", f"https://git.example.com/{TOKEN}/s3cr3t-team/r.git")
    got, scrub = facts(r, {"TEAM_SECRET": "s3cr3t-team"})
    assert got["remote"] == "https://git.example.com/<redacted:github-token>/<redacted:env-value>/r.git"
    assert scrub.scrubbed() == {"env-value": 1, "github-token": 1}


def test_a_utf16_file_git_is_told_to_show_as_text_is_left_out_too(tmp_path: Path) -> None:
    # `diff` in .gitattributes makes git print UTF-16 as "text": the token's letters interleaved with NULs
    r = repo(tmp_path / "r", {".gitattributes": b"*.txt diff\n", "notes.txt": "hello\n".encode("utf-16-le"),
                              "late.log": b"x\n" * 5000})
    (r / "notes.txt").write_bytes(f"token {TOKEN}\n".encode("utf-16-le"))
    (r / "late.log").write_bytes(b"x\n" * 5000 + b"tok " + TOKEN.encode("utf-16-le"))  # past git's 8,000 bytes
    got, scrub = facts(r)
    assert scrub.omitted == ["late.log", "notes.txt"] and got["diff"] == "" and got["diffRedacted"] is True


@pytest.mark.parametrize(("section", "want"), [
    (b"diff --git a/x y/z.bin b/x y/z.bin\nindex 1..2 100644\nBinary files a/x y/z.bin and b/x y/z.bin differ\n",
     "x y/z.bin"),
    (b'diff --git "a/t\\303\\251\\tab" "b/t\\303\\251\\tab"\nBinary files differ\n', "t\u00e9\tab"),
    (b"diff --git a/old b/new\nsimilarity index 90%\nrename from old\nrename to new\n", "new"),
])
def test_a_sections_path_is_read_from_its_header(section: bytes, want: str) -> None:
    assert gitdiff.path(section) == want


def test_a_diff_is_cut_into_files_and_only_binary_ones_are_binary() -> None:
    text = b"diff --git a/a b/a\n@@ -1 +1 @@\n-Binary files a and b differ\n+x\n"
    binary = b"diff --git a/b b/b\nindex 1..2\nBinary files a/b and b/b differ\n"
    assert gitdiff.files(text + binary) == [text, binary]
    assert [gitdiff.is_binary(s) for s in gitdiff.files(text + binary)] == [False, True]
    assert gitdiff.is_binary(b"diff --git a/u b/u\n@@ -1 +1 @@\n-h\x00i\x00\n+t\x00o\x00\n")
