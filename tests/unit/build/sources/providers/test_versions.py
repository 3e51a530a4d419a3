"""npm's semver ranges for release versions (runner/build/sources/providers/versions.py), as node-semver reads them."""
from __future__ import annotations

import pytest

from runner.build.sources.providers.versions import satisfies

CASES = [
    ("22.1.0", ">=0.8.0", True), ("17.9.9", ">=18", False), ("18.0.0", ">= 18", True),
    ("10.5.0", "^8.16.0 || ^10.6.0 || >=11.0.0", False), ("10.6.0", "^8.16.0 || ^10.6.0 || >=11.0.0", True),
    ("15.0.0", "^14.17.0 || >=16.0.0", False), ("18.2.0", "18.x", True), ("19.0.0", "18.x", False),
    ("18.2.0", "~18.1", False), ("18.1.9", "~18.1", True), ("18.1.2", "~18.1.3", False),
    ("0.3.0", "^0.2.3", False), ("0.2.9", "^0.2.3", True), ("0.0.4", "^0.0.3", False), ("0.0.3", "^0.0.3", True),
    ("0.1.0", "^0.0", False), ("2.5.0", "1 - 2", True), ("3.0.0", "1 - 2", False),
    ("2.3.4", "1.0 - 2.3.4", True), ("2.3.5", "1.0 - 2.3.4", False), ("1.0.0", "*", True), ("1.0.0", "", True),
    ("5.0.0", ">= 4 < 6", True), ("6.0.0", ">=4 <6", False), ("1.2.3", "<1.2.3", False), ("1.2.9", "<=1.2", True),
    ("1.3.0", "<=1.2", False), ("1.3.0", ">1.2", True), ("1.2.9", ">1.2", False), ("2.0.0", ">1", True),
    ("20.0.0", ">=20.0.0-0", True), ("2.0.0", "<2.0.0-0", False), ("1.9.0", "<2.0.0-rc.1", True),
    ("1.2.3", "1.2.3", True), ("1.2.4", "=1.2.3", False), ("1.2.3", "v1.2.3", True), ("1.0.0", ">*", False),
]


@pytest.mark.parametrize(("version", "spec", "expected"), CASES)
def test_a_range_is_read_as_node_semver_reads_it(version: str, spec: str, expected: bool) -> None:
    assert satisfies(version, spec) is expected


@pytest.mark.parametrize("spec", ["latest", "node >= 0.4", ">=1.2.3 - 2", "1.2.3.4", "~>"])
def test_a_range_not_read_here_is_unknown(spec: str) -> None:
    assert satisfies("1.2.3", spec) is None
