"""Outcome rows of scripts/bench.py (issue 30): judging an attempt as people mean it against
judging it as replay did before (twin's signature only), on the same 64,000-character tail:
a real run's output (termcolor's own suite, 42 failed tests: tests/fixtures/outcomes/termcolor)
repeated to 64,000 characters, judged against a capsule that names those tests.

  exact               the attempt printed what was recorded: twin's signatures are equal, no
                      test is parsed (target <= 1.05x)
  signature differs   recorded without CI, replayed with CI=true (pytest's summary lines whole):
                      the attempt's failed tests are parsed and compared (target <= 1.05x)
  no tests named      the same pair, a capsule naming no tests: key lines without seeds
  all-failures        64,000 characters that are all window (200 lines of 320), every line a
                      pytest `FAILED id - message`, signature differing: the most the parser
                      is given (the signature stops after 12 key lines, the parser reads 200)

Both sides run in one process, interleaved, in blocks (see ratio), so the machine's load
falls on both alike. Runs on its own too: `.venv/bin/python scripts/bench_outcome.py`.
"""
from __future__ import annotations

import dataclasses
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.verdict.attempted import attempt_of  # noqa: E402
from runner.verdict import signature as sig  # noqa: E402
from runner.verdict.judge import Attempt, Classification, Expected, expected_of  # noqa: E402

TAIL = 64_000
RUNS = 100
BLOCKS = 7
TARGET = 1.05
Row = Callable[[str, str, str, bool | None], None]


def today(output: bytes, stdout: bytes, exit_code: int, expected: Expected) -> Attempt:
    """Replay's classification before this issue, as main 5407fee's attempt_of and classify did
    it: the signature of the output, its last 40 lines, and equal signatures (and stdout)."""
    text = output.decode("utf-8", "replace")
    fs = sig.compute(text, exit_code, None)
    tail = "\n".join(text.splitlines()[-40:])
    att = Attempt(exit_code, None, fs.signature, fs.key_lines, 1.0, False, stdout, tail)
    return dataclasses.replace(att, classification=_today_classify(expected, att))


def _today_classify(expected: Expected, attempt: Attempt) -> Classification:
    if attempt.timed_out:
        return "inconclusive"
    stdout_ok = expected.stdout is None or attempt.stdout == expected.stdout
    if not expected.failed:
        return "recorded" if attempt.exit_code == (expected.exit_code or 0) and stdout_ok else "other"
    if attempt.exit_code == 0 and attempt.signal is None:
        return "pass"
    same_end = expected.exit_code is None or attempt.exit_code == expected.exit_code
    same_sig = expected.signature is None or attempt.signature == expected.signature
    return "recorded" if same_end and same_sig and stdout_ok else "other"


def now(output: bytes, stdout: bytes, exit_code: int, expected: Expected) -> Attempt:
    return attempt_of(output, stdout, exit_code, None, 1.0, False, expected)


def ratio(output: bytes, expected: Expected) -> tuple[float, float, float]:
    """Seconds of today's and of the new classification, and their ratio: BLOCKS blocks of
    RUNS runs each, interleaved (each side first half the time), thread time; a block's figure
    is its lower quartile (the runs the machine's other work disturbed least), the result the
    median block, so a burst of load on a shared machine moves neither side alone."""
    blocks: list[tuple[float, float]] = []
    gc.disable()
    try:
        for _ in range(BLOCKS):
            before: list[float] = []
            after: list[float] = []
            for i in range(RUNS):
                pair = ((today, before), (now, after))
                for fn, out in pair if i % 2 else pair[::-1]:
                    start = time.thread_time()
                    fn(output, b"", 1, expected)
                    out.append(time.thread_time() - start)
            blocks.append((statistics.quantiles(before, n=4)[0], statistics.quantiles(after, n=4)[0]))
    finally:
        gc.enable()
    old, new = statistics.median(b[0] for b in blocks), statistics.median(b[1] for b in blocks)
    return old, new, statistics.median(b[1] / b[0] for b in blocks)


def _tail(name: str) -> str:
    text = (ROOT / "tests" / "fixtures" / "outcomes" / name).read_text("utf-8")
    while len(text) < TAIL:
        text += text
    return text[-TAIL:]


def _recorded(text: str) -> Expected:
    from runner.capsules.model import Capsule, Command, Failure, Format, Provenance

    fs = sig.compute(text, 1)
    cmd = Command(("pytest",), ".", exit_code=1, outcome="fail",
                  failure=Failure(fs.signature, fs.key_lines, sig.output_tail(text)))
    return expected_of(Capsule(Provenance(Format.TWIN, "1", "bench.json"), cmd))


def cases() -> list[tuple[str, str, Expected, str | None]]:
    """name, the attempt's output, the capsule's expectation, and the classification it must get."""
    plain, ci = _tail("termcolor/dumb.txt"), _tail("termcolor/dumb-ci.txt")
    named = _recorded(plain)
    assert len(named.tests[0].failed) == 42
    untested = Expected(True, 1, None, named.signature, named.key_lines)
    worst = "\n".join(f"FAILED tests/test_x.py::test_{i:03d} - AssertionError: " + "x" * 268 for i in range(200))
    assert len(worst) <= TAIL
    worst_recorded = _recorded(worst.replace("AssertionError: x", "AssertionError: y"))
    return [("exact (42 tests named)", plain, named, "recorded"),
            ("signature differs (42 tests parsed)", ci, named, "recorded"),
            ("signature differs, no tests named", ci, untested, "other"),
            ("all-failures tail (200 tests parsed)", worst, worst_recorded, "recorded")]


def run(tmp: Path, env: dict[str, str], warm_s: float, row: Row) -> None:
    for name, text, expected, kind in cases():
        got = now(text.encode(), b"", 1, expected).classification
        if got != kind:
            row(f"outcome: {name}", f"classified {got}, not {kind}", "", False)
            continue
        old, new, r = ratio(text.encode(), expected)
        worst = name.startswith("all-failures")
        row(f"outcome: {name}", f"{new * 1e3:.2f} ms vs {old * 1e3:.2f} ms today = {r:.3f}x",
            f"(worst case; {TARGET}x)" if worst else f"<= {TARGET}x", None if worst else r <= TARGET)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "scripts"))
    from benchrow import row

    run(Path("."), {}, 0.0, row)
