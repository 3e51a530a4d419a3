"""Hypothesis profiles, the offline registries, and the tally behind RESULTS.md.

Profiles (REPLAY_FUZZ_PROFILE): ``ci`` (the default) is derandomized with no example
database, so every run tries the same cases and RESULTS.md can be compared; ``long``
tries ten times as many random cases per class, for hunting locally (its tally is
written to RESULTS-long.md, never compared).
"""
from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.fuzz.harness import offline_registries

PROFILE = os.environ.get("REPLAY_FUZZ_PROFILE", "ci")
SCALE = 10 if PROFILE == "long" else 1

settings.register_profile(
    "ci", derandomize=True, database=None, deadline=None, print_blob=False,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example),
)
settings.register_profile(
    "long", derandomize=False, database=None, deadline=None,
    suppress_health_check=(HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example),
)
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    return n * SCALE


@pytest.fixture(scope="package", autouse=True)
def _offline() -> Iterator[None]:
    # package scope: undone after the last fuzz test, so the tests after it reach the real engine
    with offline_registries():
        yield
