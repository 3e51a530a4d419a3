"""Reading a file of someone else's capsule: regular files only, never more than a cap."""
from __future__ import annotations

import stat
from pathlib import Path

from ..errors import CapsuleError


def read_capped(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file no bigger than ``max_bytes`` (a FIFO would block forever)."""
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise CapsuleError(path, "not a regular file")
        if st.st_size > max_bytes:
            raise CapsuleError(path, f"file is {st.st_size} bytes, over the {size_text(max_bytes)} limit")
        with path.open("rb") as f:
            raw = f.read(max_bytes + 1)  # the file may grow between stat and read
    except FileNotFoundError:
        raise CapsuleError(path, "missing") from None
    except OSError as e:
        raise CapsuleError(path, f"cannot read: {e.strerror or e}") from None
    if len(raw) > max_bytes:
        raise CapsuleError(path, f"file is over the {size_text(max_bytes)} limit")
    return raw


def size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} byte"
