"""An order dependency: test_empty fails when test_fill ran before it (pytest-randomly shuffles them)."""
CACHE = {}


def test_fill():
    CACHE["key"] = 1


def test_empty():
    assert not CACHE, f"the cache holds {len(CACHE)} entries: test_fill ran first"
