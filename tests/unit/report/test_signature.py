"""`replay signature`'s key lines: a run's output is untrusted, every control escaped (bidi
overrides and U+2028 too, not only C0 and C1)."""
from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli.main import main


def test_key_lines_show_controls_bidi_and_separators_escaped(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.txt"
    out.write_text("ok\nError: \x1b]0;t\x07bad \u202etxt.exe\u2028more\n", encoding="utf-8")
    assert main(["signature", "--exit-code", "1", str(out)]) == 0
    text = capsys.readouterr().out
    assert "bad \\u202etxt.exe" in text  # (the signature rule itself drops ANSI sequences)
    assert not set(text) & set("\x1b\x07\u202e\u2028")
