"""What replay left on an engine, as values: the seam `replay gc` (runner/machine/gc.py, disk.py)
and doctor look through, so nothing but the engine package drives the docker client.

Inventory is the protocol; DockerInventory its docker SDK implementation (every call through
sdk.py, so an SDK error is replay's typed error, exit 3); unit tests use a stand-in.
"""
from __future__ import annotations

import datetime
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from .sdk import retrying, sdk_call, typed

Kind = Literal["container", "network"]


@dataclass(frozen=True)
class Resource:
    """A container or network, with its labels."""

    kind: Kind
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    created: float = 0.0  # seconds since the epoch (0: the engine does not say)
    image_id: str = ""  # a container's
    state: str = ""  # a container's: running, exited...
    id: str = ""  # a container's full id (the name is what removes it)


@dataclass(frozen=True)
class ImageRecord:
    id: str
    tags: tuple[str, ...]
    size: int
    created: float
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CacheRecord:
    """One record of the engine's build cache (BuildKit's `docker system df`)."""

    id: str
    type: str
    description: str
    size: int
    in_use: bool
    last_used: float


@dataclass(frozen=True)
class VolumeRecord:
    """An engine volume (`docker system df -v`)."""

    name: str
    size: int  # bytes (0: the engine does not say)
    mounted: int  # containers that mount it
    created: float
    labels: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class Inventory(Protocol):
    def labelled(self, label: str) -> list[Resource]: ...  # containers and networks: "key" or "key=value"
    def containers(self) -> list[Resource]: ...  # every container, replay's or not (which image each holds)
    def remove(self, kind: Kind, name: str) -> None: ...
    def images(self, label: str | None = None, repo: str | None = None) -> list[ImageRecord]: ...
    def remove_image(self, ref: str) -> None: ...
    def build_cache(self) -> list[CacheRecord]: ...  # none when the engine keeps no BuildKit cache
    def prune_build_cache(self, record_id: str) -> None: ...
    def volumes(self, label: str) -> list[VolumeRecord]: ...  # "key=value"
    def remove_volume(self, name: str) -> bool: ...  # False: a container took it into use meanwhile


def timestamp(raw: Any) -> float:
    """Docker's times: RFC 3339 with nanoseconds, or seconds since the epoch; unknown: now (kept as new)."""
    if isinstance(raw, (int, float)) and raw > 0:
        return float(raw)
    try:  # fromisoformat takes microseconds
        text = re.sub(r"(\.\d{6})\d+", r"\1", str(raw)).replace("Z", "+00:00")
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return time.time()


class DockerInventory:
    """The docker SDK's answers, as values."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._df: dict[str, Any] | None = None

    @classmethod
    def connect(cls, timeout_s: int = 10) -> DockerInventory:
        """The engine DOCKER_HOST names (or the local socket), answering a ping; any failure raises."""
        import docker

        client = docker.from_env(timeout=timeout_s)
        client.ping()
        return cls(client)

    def versions(self) -> dict[str, str]:
        """The engine's version and API version."""
        info = self.client.version()
        return {"engine": str(info.get("Version")), "engine API": str(info.get("ApiVersion"))}

    @typed
    def labelled(self, label: str) -> list[Resource]:
        flt = {"label": label}
        out = [_container(c.attrs) for c in retrying(sdk_call)(self.client.containers.list, all=True, filters=flt)]
        for n in retrying(sdk_call)(self.client.networks.list, filters=flt):
            out.append(Resource("network", n.name, dict(n.attrs.get("Labels") or {}), timestamp(n.attrs.get("Created"))))
        return out

    @typed
    def containers(self) -> list[Resource]:
        return [Resource("container", (c.get("Names") or ["?"])[0].lstrip("/"), dict(c.get("Labels") or {}),
                         timestamp(c.get("Created")), str(c.get("ImageID")), str(c.get("State", "unknown")),
                         str(c.get("Id") or ""))
                for c in retrying(sdk_call)(self.client.api.containers, all=True)]

    @typed
    def remove(self, kind: Kind, name: str) -> None:
        if kind == "container":
            self.client.containers.get(name).remove(force=True)
        else:
            self.client.networks.get(name).remove()

    @typed
    def images(self, label: str | None = None, repo: str | None = None) -> list[ImageRecord]:
        found = retrying(sdk_call)(self.client.images.list, name=repo, filters={"label": label} if label else None)
        return [ImageRecord(str(i.id), tuple(sorted(i.tags)), int(i.attrs.get("Size") or 0),
                            timestamp(i.attrs.get("Created")), dict(i.labels or {})) for i in found]

    @typed
    def remove_image(self, ref: str) -> None:
        self.client.images.remove(ref, noprune=False)

    @typed
    def build_cache(self) -> list[CacheRecord]:
        try:
            records = self._usage().get("BuildCache") or []
        except Exception:  # noqa: BLE001 - an engine without BuildKit's cache: nothing to list
            return []
        return [CacheRecord(str(r.get("ID")), str(r.get("Type") or ""), str(r.get("Description") or ""),
                            int(r.get("Size") or 0), bool(r.get("InUse")),
                            timestamp(r.get("LastUsedAt") or r.get("CreatedAt"))) for r in records]

    @typed
    def prune_build_cache(self, record_id: str) -> None:
        self.client.api.prune_builds(filters={"id": [record_id]}, all=True)

    def _usage(self) -> dict[str, Any]:
        """The engine's disk usage (`docker system df -v`: it sizes every layer, cache record and volume),
        asked once per inventory: a gc's cache sweep reads its build cache and its volumes from one answer."""
        if self._df is None:
            self._df = dict(retrying(sdk_call)(self.client.df))
        return self._df

    @typed
    def volumes(self, label: str) -> list[VolumeRecord]:
        key, _, value = label.partition("=")
        records = self._usage().get("Volumes") or []
        return [VolumeRecord(str(v.get("Name")), max(0, int((v.get("UsageData") or {}).get("Size") or 0)),
                             max(0, int((v.get("UsageData") or {}).get("RefCount") or 0)),
                             timestamp(v.get("CreatedAt")), dict(v.get("Labels") or {}))
                for v in records if (v.get("Labels") or {}).get(key) == value]

    @typed
    def remove_volume(self, name: str) -> bool:
        import docker.errors

        try:
            self.client.api.remove_volume(name)
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # in use: a replay mounted it since the sweep
                return False
            raise
        return True


def _container(attrs: Mapping[str, Any]) -> Resource:
    config = attrs.get("Config") or {}
    return Resource("container", str(attrs.get("Name", "?")).lstrip("/"), dict(config.get("Labels") or {}),
                    timestamp(attrs.get("Created")), str(attrs.get("Image") or ""),
                    str((attrs.get("State") or {}).get("Status", "unknown")), str(attrs.get("Id") or ""))
