"""A container's spec as the SDK takes it (every container, `replay shell`'s too): containment limits, mounts, files."""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..errors import ReplayError
from .protocol import Containment, ContainerFile, Mount

def limits(c: Containment) -> dict[str, Any]:
    """The containment policy as the SDK's create() arguments."""
    out: dict[str, Any] = {
        "mem_limit": c.memory, "pids_limit": c.pids_limit,
        "security_opt": ["no-new-privileges"] if c.no_new_privileges else None,
        "cap_drop": list(c.cap_drop) or None, "cap_add": list(c.cap_add) or None,
        "log_config": {"type": "json-file", "config": {"max-size": c.log_max, "max-file": "1"}},
    }
    if c.cpus:
        out["nano_cpus"] = int(c.cpus * 1e9)
    return out


def only_file(archive_bytes: bytes) -> bytes | None:
    """The regular file an engine archive of one path holds; None when it holds none."""
    import io
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(archive_bytes)) as tar:
        member = next((m for m in tar.getmembers() if m.isfile()), None)
        fh = tar.extractfile(member) if member is not None else None
        return fh.read() if fh is not None else None


def archive(files: Sequence[ContainerFile]) -> bytes:
    """A tar to unpack at "/": absolute paths made relative, root-owned, each with its mode.
    The engine makes missing parent directories itself (root, 0755)."""
    import io
    import tarfile

    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for f in files:
            if not f.path.startswith("/") or ".." in f.path.split("/"):
                raise ReplayError(f"engine: container file path {f.path!r} must be absolute, without '..'")
            info = tarfile.TarInfo(f.path.lstrip("/"))
            info.size, info.mode, info.mtime, info.uid, info.gid = len(f.data), f.mode, now, 0, 0
            tar.addfile(info, io.BytesIO(f.data))
    return buf.getvalue()


def docker_mount(m: Mount, labels: Sequence[tuple[str, str]] = ()) -> Any:
    from docker.types import Mount as DMount

    if m.volume:  # the engine makes it with the container's labels, so cleanup finds it
        return DMount(target=m.target, source=m.source, type="volume", read_only=m.read_only, labels=dict(labels))
    return DMount(target=m.target, source=m.source, type="bind", read_only=m.read_only)
