"""`farm history CAPSULE`: which capsule the user means, and how it was found.

Tried in order, the first that the history knows wins: the path as the history records
it (as `farm report` prints it: it works from any directory and after the file changed),
the content of the file at that path (the capsule as it is now), an id prefix.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import UsageError
from ..textsafe import shown as one_line
from .records import CapsuleResult
from .store import SqlStore

_ID_PREFIX = re.compile(r"[0-9a-f]{1,64}")


def find_capsule(store: SqlStore, given: str) -> tuple[str, list[CapsuleResult]]:
    """(a line saying what matched, the results oldest first); no results: nothing matched."""
    shown = one_line(given, 200)
    if not given.strip():
        raise UsageError("farm history: name a capsule (its path, a file or an id prefix)")
    at_path = store.results_at_path(given)
    if at_path:
        ids = sorted({r.capsule_id for r in at_path})
        contents = f" ({len(ids)} contents over time)" if len(ids) > 1 else f" (capsule {ids[0]})"
        return f"matched the path {shown} as the history records it{contents}", at_path
    path = Path(given).expanduser()
    if path.exists():
        from .ids import content_id

        cid = content_id(path)
        by_content = store.capsule_results(cid)
        if by_content:
            return f"matched the content of {shown} (capsule {cid})", by_content
    key = given.strip().lower()
    if _ID_PREFIX.fullmatch(key):
        ids = store.capsule_ids(key, limit=6)
        if len(ids) > 1:
            more = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise UsageError(f"farm history {shown}: the id prefix matches several capsules ({more}); give more of it")
        if ids:
            return f"matched the id prefix {key} (capsule {ids[0]})", store.capsule_results(ids[0])
    tried = "a path the history records, " + ("the file's content, " if path.exists() else "") + "an id prefix"
    return f"nothing matched {shown} (tried {tried})", []
