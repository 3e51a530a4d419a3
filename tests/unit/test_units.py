"""Sizes as `gc --max-size` reads them (runner/units.py): binary units, a bare number is bytes."""
from __future__ import annotations

import pytest

from runner.units import format_size, parse_size


@pytest.mark.parametrize("text, n", [("20G", 20 << 30), ("500M", 500 << 20), ("1.5GiB", 3 << 29), ("100k", 102400),
                                     ("123", 123), ("10 GB", 10 << 30), ("2t", 2 << 40), ("7b", 7), ("0", 0)])
def test_sizes_people_write(text: str, n: int) -> None:
    assert parse_size(text) == n


@pytest.mark.parametrize("text", ["", "G", "-1G", "1.2.3G", "20X", "1e9", "7ib", "20 parsecs"])
def test_anything_else_is_refused_naming_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="is not a size .*20G"):
        parse_size(text)


@pytest.mark.parametrize("n", [0, 1023, 1536, 20 << 30, 3 << 40, 100_000])
def test_the_shown_size_reads_back_to_a_tenth(n: int) -> None:
    assert abs(parse_size(format_size(n)) - n) <= max(1, n * 0.05)
