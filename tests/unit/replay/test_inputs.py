"""--patch takes a file or the diff's text itself (`--patch "$(git -C DIR diff)"`)."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.errors import UsageError
from runner.replay.inputs import plan_options

DIFF = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"


def test_the_diffs_text_is_the_patch_with_the_newline_the_shell_dropped() -> None:
    assert plan_options({"patch": DIFF.rstrip("\n")}).patch == DIFF


def test_a_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "fix.diff").write_text(DIFF)
    assert plan_options({"patch": str(tmp_path / "fix.diff")}).patch == DIFF


def test_neither_a_file_nor_a_diff_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--patch .*nope.diff"):
        plan_options({"patch": str(tmp_path / "nope.diff")})
