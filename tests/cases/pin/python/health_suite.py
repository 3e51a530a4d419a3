"""Fails Hypothesis's filter health check for some seeds only: assume() keeps 1 input in 7, and
whether 50 are filtered out before 10 pass depends on the draws (about 2 seeds in 3 fail)."""
from hypothesis import assume, given, strategies as st


@given(st.integers(0, 10**6))
def test_sevenths(n):
    assume(n % 7 == 1)
