"""twin's secret rules over what a replay reports: each rule, what is left alone, linear time,
and an attempt as the replayer hands it back (judged first, on what was really printed)."""
from __future__ import annotations

import time

import pytest

from runner.verdict.judge import Attempt, Expected
from runner.replay.replayer import SUPPLIED, attempt_of, redacted
from runner.secretrules import looks_random, scrub, scrub_bytes

GH = "ghp_" + "a1B2c3D4" * 5


@pytest.mark.parametrize(("text", "want"), [
    (f"token {GH} done", "token <redacted:github-token> done"),
    ("https://bob:hunter2@git.example.com/app.git", "https://<redacted:url-credentials>@git.example.com/app.git"),
    ("key AKIAABCDEFGHIJKLMNOP", "key <redacted:aws-access-key>"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----!", "<redacted:private-key>!"),
    ("glpat-abcdefghij0123456789", "<redacted:gitlab-token>"),
    ("xoxb-1234567890-abc", "<redacted:slack-token>"),
    ("sk_live_0123456789abcdefXYZ", "<redacted:stripe-key>"),
    ("npm_" + "a" * 36, "<redacted:npm-token>"),
    ("sk-ant-abcdefghijklmnopqrstuvwx", "<redacted:llm-api-key>"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmno", "<redacted:jwt>"),
    ("Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer <redacted:bearer-token>"),
    ("export DB_PASSWORD=hunter22", "export DB_PASSWORD=<redacted:assignment>"),
    ('{"api_key": "s3cr3t-value"}', '{"api_key": "<redacted:assignment>"}'),
    ("x=token=secret123", "x=token=<redacted:assignment>"),
    ("seed Xk29Lm3Np8Qr4St7Uv1Wx5Yz0Ab6Cd2Ef", "seed <redacted:high-entropy>"),
])
def test_each_rule_replaces_its_match_with_a_marker(text: str, want: str) -> None:
    assert scrub(text) == want


@pytest.mark.parametrize("text", [
    "commit 3f2c9e1a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d0",  # hex digests stay readable
    "integrity sha512-" + "aB3dE6" * 12,  # lockfile integrity hashes are public
    "Error: value is 41, expected 42", "tz America/New_York", "token: abc",  # too short to be a value
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # long but not random
])
def test_what_is_not_a_secret_is_left_alone(text: str) -> None:
    assert scrub(text) == text


def test_entropy_needs_mixed_case_digits_and_bits() -> None:
    assert looks_random("Xk29Lm3Np8Qr4St7Uv1Wx5Yz0Ab6Cd2Ef")
    assert not looks_random("abcdefabcdefabcdefabcdefabcdefab")


@pytest.mark.parametrize("text", [
    "a." * 500_000, "token=" * 100_000, "-----BEGIN PRIVATE KEY-----" * 30_000, "x://" * 200_000,
    "Bearer " * 150_000, "eyJ" * 300_000, "a" * 1_000_000, "passwd:" * 150_000,
])
def test_scrubbing_stays_linear_on_what_a_program_may_print(text: str) -> None:
    start = time.perf_counter()
    scrub(text)
    assert time.perf_counter() - start < 10  # about 1-2 s a megabyte on a loaded 2-core machine


def test_bytes_that_are_not_utf8_survive() -> None:
    assert scrub_bytes(b"\xff " + GH.encode() + b" \xfe") == b"\xff <redacted:github-token> \xfe"


def test_an_attempt_is_judged_on_what_it_printed_and_reported_without_secrets() -> None:
    out = f"token=[{GH}] supplied=[hunter2-secret]\nError: boom\n".encode()
    expected = Expected(False, 0, None, None, (), out)
    att = attempt_of(out, out, 0, None, 1.0, False, expected)
    assert att.classification == "recorded"  # byte for byte, before scrubbing
    shown = redacted(att, ["hunter2-secret"])
    for text in (shown.output_tail, shown.stdout.decode(), *shown.key_lines):
        assert GH not in text and "hunter2-secret" not in text
    assert "<redacted:github-token>" in shown.output_tail and SUPPLIED in shown.output_tail
    assert shown.classification == "recorded"


def test_nothing_to_scrub_leaves_the_attempt_as_it_was() -> None:
    att = Attempt(1, None, "exit1:0", ("Error: boom",), 1.0, stdout=b"ok\n", output_tail="Error: boom")
    assert redacted(att, []) == att


def test_a_supplied_value_shown_as_such_is_not_scrubbed_again() -> None:
    assert scrub(f"token={SUPPLIED}") == f"token={SUPPLIED}"
