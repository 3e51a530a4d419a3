"""Build log reading: the telling error line, and which steps really ran."""
from __future__ import annotations

from runner.engine.builders import _last_error
from runner.engine.steps import BK_STEP as _BK_STEP


def test_the_specific_error_beats_our_success_lines_and_npm_noise() -> None:
    tail = [
        "#12 0.5 replay: lockfile package-lock.json sha256 ab12 matches the capsule",
        "#13 1.0 npm error code EINTEGRITY",
        "#13 1.0 npm error sha512-abc integrity checksum failed when using sha512",
        "#13 1.1 npm error A complete log of this run can be found in: /root/.npm/_logs/x.log",
        "executor failed running [/bin/sh -c set -eu; ...]: exit code: 1",
    ]
    assert _last_error(tail) == "npm error code EINTEGRITY"


def test_a_lockfile_mismatch_names_both_hashes() -> None:
    tail = ["#12 0.3 replay: lockfile package-lock.json sha256 mismatch: capsule aa, repository bb"]
    assert _last_error(tail) == "replay: lockfile package-lock.json sha256 mismatch: capsule aa, repository bb"


def test_buildkit_progress_lines_are_recognised() -> None:
    assert _BK_STEP.match("#7 [4/9] RUN apt-get update").group(1) == "7"  # type: ignore[union-attr]
    assert _BK_STEP.match("#7 CACHED").group(2) == "CACHED"  # type: ignore[union-attr]
    assert _BK_STEP.match("#7 0.512 some output") is None
