"""The command runs here: its own exit code, a signal's name, its output streamed and its tail kept."""
from __future__ import annotations

import io
import sys

from runner.verdict import signature as sig
from runner.capture.execute import KEEP_BYTES, run


def streams() -> tuple[io.BytesIO, io.BytesIO]:
    return io.BytesIO(), io.BytesIO()


def test_the_exit_code_and_both_streams_come_through() -> None:
    out, err = streams()
    res = run([sys.executable, "-c", "import sys; print('to out', flush=True); print('to err', file=sys.stderr); sys.exit(7)"],
              stdout=out, stderr=err)
    assert (res.exit_code, res.signal, res.failed, res.shell_code) == (7, None, True, 7)
    assert out.getvalue() == b"to out\n" and err.getvalue() == b"to err\n"
    assert res.output == "to out\nto err\n" and res.duration_ms >= 0


def test_a_signal_is_recorded_by_name_and_exits_as_128_plus_n() -> None:
    res = run(["sh", "-c", "kill -KILL $$"], **dict(zip(("stdout", "stderr"), streams())))
    assert (res.exit_code, res.signal, res.shell_code) == (None, "SIGKILL", 137)


def test_a_missing_command_ends_as_a_shell_would() -> None:
    out, err = streams()
    res = run(["no-such-command-anywhere"], stdout=out, stderr=err)
    assert (res.exit_code, res.shell_code) == (127, 127) and b"command not found" in err.getvalue()
    assert "command not found" in res.output


def test_a_long_output_keeps_what_the_tail_window_needs_and_streams_all_of_it() -> None:
    out, err = streams()
    script = "import sys\nfor i in range(60000): print(f'line {i:05d} ' + 'x' * 20)\nprint('Error: the end')\nsys.exit(1)"
    res = run([sys.executable, "-c", script], stdout=out, stderr=err)
    assert out.getvalue().count(b"\n") == 60001
    assert len(res.output.encode()) <= KEEP_BYTES
    tail = sig.output_tail(res.output)
    assert tail.splitlines()[-1] == "Error: the end" and len(tail.splitlines()) == sig.TAIL_LINES
    assert sig.output_tail(out.getvalue().decode()) == tail


def test_bad_utf8_becomes_the_replacement_character() -> None:
    res = run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'caf\\xe9\\n')"], **dict(zip(("stdout", "stderr"), streams())))
    assert res.output == "caf\ufffd\n" and res.exit_code == 0 and not res.failed
