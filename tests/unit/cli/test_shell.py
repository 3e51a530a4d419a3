"""`replay shell`'s CLI: one of CAPSULE, --kept ID or --last, else one line, exit 2 (before any engine)."""
from __future__ import annotations

import pytest

from runner.cli.main import main


@pytest.mark.parametrize("args", [[], ["capsule.json", "--last"], ["--kept", "0123456789ab", "--last"]])
def test_shell_takes_one_state(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shell", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "replay: error: replay shell takes one of CAPSULE, --kept ID or --last"
