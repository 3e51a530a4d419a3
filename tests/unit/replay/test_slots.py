"""Build contexts at stable paths (runner/replay/slots.py): one build at a time in each."""
from __future__ import annotations

import os
from pathlib import Path

from runner.replay.slots import context_slot


def test_a_slot_is_held_then_given_again_emptied(tmp_path: Path) -> None:
    with context_slot(tmp_path) as first:
        first.mkdir()
        (first / "Dockerfile").write_text("FROM x\n")
        with context_slot(tmp_path) as second:  # another build meanwhile (a thread or a process)
            assert second != first and not second.exists()
    assert not first.exists()  # emptied: the engine keeps its copy, the path is what counts
    with context_slot(tmp_path) as again:
        assert again == first  # the same path: BuildKit sends only what changed since


def test_a_slot_left_by_a_killed_build_starts_empty(tmp_path: Path) -> None:
    (tmp_path / "slot-0").mkdir(parents=True)
    (tmp_path / "slot-0" / "stale").write_text("x")
    with context_slot(tmp_path) as slot:
        assert slot == tmp_path / "slot-0" and not slot.exists()


def test_a_file_s_mtime_comes_from_its_content(tmp_path: Path) -> None:
    """BuildKit re-sends a context file by stat alone: equal stat must mean equal content."""
    import hashlib

    from runner.engine.builders import context_digest
    from runner.replay.slots import stamp

    a, b, c = (tmp_path / n for n in ("a", "b", "c"))
    a.write_text("integrity sha512-AAAA")
    b.write_text("integrity sha512-BBBB")  # the same size, as git archive gives both one commit time
    c.write_text("integrity sha512-AAAA")
    for p in (a, b, c):
        os.utime(p, (1767225600, 1767225600))
    before = context_digest(tmp_path)
    assert context_digest(tmp_path, stamp) == before  # the content digest does not see times
    times = {p.name: p.stat().st_mtime_ns for p in (a, b, c)}
    assert times["a"] == times["c"] != times["b"]
    stamp(a, hashlib.sha256(b"integrity sha512-AAAA").digest())
    assert a.stat().st_mtime_ns == times["a"]
