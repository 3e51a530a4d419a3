"""The recorded clock and random values, handed to the replayed program.

Clock: the program starts at the recorded time through libfaketime (LD_PRELOAD).
A relative offset (FAKETIME="-<n>s") computed just before the run keeps one
timeline for every process and lets the clock run on, so timers fire (an absolute
FAKETIME freezes time and hangs Node's setTimeout; `@time` restarts the clock in
every process), and monotonic clocks move by the same offset. The image must
have Debian's `libfaketime` package (the `faketime` package pulls it in).

Random values: written to a JSON file mounted into the container, named by
REPLAY_RANDOM_VALUES, for hook libraries to read (nothing else uses them):

    {"format": "replay-random-values/1",
     "values": [{"seq": 3, "base64": "q83v..."}, ...]}       # in recorded order
"""
from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

from ..capsules.model import RecordedValue

FAKETIME_LIBS = {
    "x86_64": "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "aarch64": "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
}
RANDOM_VALUES_ENV = "REPLAY_RANDOM_VALUES"
RANDOM_VALUES_PATH = "/replay/random-values.json"  # where the file is mounted in the container
RANDOM_VALUES_FORMAT = "replay-random-values/1"

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$", re.ASCII)


def parse_rfc3339(text: str) -> dt.datetime | None:
    """An aware datetime (fraction cut to microseconds: Python keeps no more), or None."""
    m = _RFC3339.match(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micro = int((m.group(7) or "0").ljust(9, "0")[:6])
    zone = m.group(8)
    if zone in ("Z", "z"):
        tz = dt.UTC
    else:
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:  # "+99:00": RFC 3339 offsets stay within a day
            return None
        sign = 1 if zone[0] == "+" else -1
        tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    try:
        moment = dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
        moment.astimezone(dt.UTC)  # 9999-12-31T23:00:00-05:00 is past the last year Python holds
    except (ValueError, OverflowError):  # 2026-02-30, second 60
        return None
    return moment


def clock_start(values: Sequence[RecordedValue], created_at: str | None) -> str | None:
    """When the replayed program's clock starts: the first recorded clock value, else the capsule's creation time."""
    clocks = sorted((v for v in values if v.kind == "clock" and parse_rfc3339(v.value)), key=lambda v: v.seq)
    if clocks:
        return clocks[0].value
    if created_at and parse_rfc3339(created_at):
        return created_at
    return None


def faketime_env(start_rfc3339: str, now: dt.datetime | None = None,
                 arch: str = "x86_64") -> tuple[tuple[str, str], ...]:
    """Environment that starts the program's clock at start_rfc3339; call it just before the run."""
    start = parse_rfc3339(start_rfc3339)
    if start is None:
        raise ValueError(f"not an RFC 3339 time: {start_rfc3339!r}")
    current = now or dt.datetime.now(dt.UTC)
    # Whole seconds, rounded so the program's clock starts at or just after the recorded time, never before.
    offset = math.floor((current - start).total_seconds())
    spec = f"-{offset}s" if offset >= 0 else f"+{-offset}s"
    lib = FAKETIME_LIBS.get(arch, FAKETIME_LIBS["x86_64"])
    # No DONT_FAKE_MONOTONIC: measured here, with it libfaketime 0.9.10 makes Python's time.sleep
    # fail with EINVAL (an absolute clock_nanosleep deadline); without it a relative offset keeps
    # monotonic time flowing, and Node's timers and Python's sleep both work.
    return (("LD_PRELOAD", lib), ("FAKETIME", spec))


def clock_limits_note() -> str:
    return ("the recorded clock is applied with libfaketime (LD_PRELOAD): static binaries and Go programs "
            "read the real clock (Go uses the vDSO, not libc); timestamps the kernel sets (a new file's mtime) "
            "stay real; the clock runs on from the recorded start")


def random_values_file(values: Sequence[RecordedValue], directory: Path) -> Path:
    """Write the recorded random values (in order) for hook libraries; mount it at RANDOM_VALUES_PATH."""
    items = []
    for v in sorted((v for v in values if v.kind == "random"), key=lambda v: v.seq):
        base64.b64decode(v.value, validate=True)  # a reader already checked; fail loudly if not
        items.append({"seq": v.seq, "base64": v.value})
    path = Path(directory) / "random-values.json"
    path.write_text(json.dumps({"format": RANDOM_VALUES_FORMAT, "values": items}, indent=1), encoding="utf-8")
    return path


def random_values_env() -> tuple[tuple[str, str], ...]:
    return ((RANDOM_VALUES_ENV, RANDOM_VALUES_PATH),)
