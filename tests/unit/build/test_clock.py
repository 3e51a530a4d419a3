"""The recorded clock through libfaketime, and the random values file."""
from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path

import pytest

from runner.capsules import read_capsule
from runner.capsules.model import RecordedValue
from runner.build.clock import (RANDOM_VALUES_ENV, RANDOM_VALUES_PATH, clock_limits_note, clock_start, faketime_env,
                          parse_rfc3339, random_values_env, random_values_file)

UTC = dt.UTC


def test_parse_rfc3339_with_nanoseconds_and_offsets() -> None:
    assert parse_rfc3339("2026-10-13T08:00:00.123456789Z") == dt.datetime(2026, 10, 13, 8, 0, 0, 123456, UTC)
    assert parse_rfc3339("2026-10-13T10:00:00+02:00") == dt.datetime(2026, 10, 13, 8, 0, tzinfo=UTC)
    assert parse_rfc3339("2026-02-30T00:00:00Z") is None
    assert parse_rfc3339("yesterday") is None


def test_clock_start_is_the_first_clock_value_else_created_at() -> None:
    values = [RecordedValue(3, "clock", "2026-10-13T08:00:05.000000000Z"), RecordedValue(1, "random", "AAAA"),
              RecordedValue(2, "clock", "2026-10-13T08:00:00.000000000Z")]
    assert clock_start(values, "2020-01-01T00:00:00Z") == "2026-10-13T08:00:00.000000000Z"
    assert clock_start([], "2020-01-01T00:00:00Z") == "2020-01-01T00:00:00Z"
    assert clock_start([], "not a time") is None and clock_start([], None) is None


def test_clock_start_of_the_example_capsule() -> None:
    capsule = read_capsule(Path(__file__).parents[2] / "fixtures/examples/codeinstances/fetch-greeting.json")
    assert clock_start(capsule.values, capsule.provenance.created_at) == "2026-10-13T08:00:00.000000000Z"


def test_faketime_env_is_a_relative_offset_with_real_monotonic() -> None:
    now = dt.datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)
    env = dict(faketime_env("2026-11-30T08:00:00.000000000Z", now=now))
    assert env == {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                   "FAKETIME": "-3600s"}
    assert dict(faketime_env("2026-11-30T09:00:30Z", now=now))["FAKETIME"] == "+30s"
    # never before the recorded start: 0.6 s past it is an offset of 0 s, 0.4 s before it is +1 s
    assert dict(faketime_env("2026-11-30T08:59:59.400Z", now=now))["FAKETIME"] == "-0s"
    assert dict(faketime_env("2026-11-30T09:00:00.400Z", now=now))["FAKETIME"] == "+1s"
    assert dict(faketime_env("2026-11-30T09:00:00Z", now=now, arch="aarch64"))["LD_PRELOAD"].startswith(
        "/usr/lib/aarch64-linux-gnu/")
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        faketime_env("soon")


def test_faketime_env_defaults_to_now() -> None:
    start = (dt.datetime.now(UTC) - dt.timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    offset = int(dict(faketime_env(start))["FAKETIME"].strip("-s"))
    assert abs(offset - 2 * 86400) <= 2


def test_random_values_file_keeps_recorded_order(tmp_path: Path) -> None:
    one, two = base64.b64encode(b"\x01\x02").decode(), base64.b64encode(b"\xff").decode()
    values = [RecordedValue(5, "random", two), RecordedValue(2, "random", one),
              RecordedValue(1, "clock", "2026-10-13T08:00:00Z")]
    path = random_values_file(values, tmp_path)
    assert path == tmp_path / "random-values.json"
    assert json.loads(path.read_text()) == {"format": "replay-random-values/1",
                                            "values": [{"seq": 2, "base64": one}, {"seq": 5, "base64": two}]}
    assert random_values_env() == ((RANDOM_VALUES_ENV, RANDOM_VALUES_PATH),)
    assert RANDOM_VALUES_ENV == "REPLAY_RANDOM_VALUES"


def test_clock_limits_note_names_what_is_not_faked() -> None:
    note = clock_limits_note()
    assert "static binaries" in note and "Go" in note
