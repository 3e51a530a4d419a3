"""What replay needs from a container engine, as a protocol.

The docker implementation (docker.py) satisfies it; unit tests use a fake that does
too. Build yields events, run returns a result; engine errors become replay's own
typed errors. Every container replay starts gets one Containment policy.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from .steps import BuildEvent

LABEL = "replay"  # every image, container and network replay makes carries it
# ...and every container and network also `replay.owner=<host>:<pid>` of the process that made it,
# so `replay gc` can tell what a replay that is gone left behind from what a running one uses
OWNER_LABEL = "replay.owner"
# An attempt's container that may be kept (--keep) carries it, and the plan it ran (its JSON, plancodec.py)
# under PLAN_LABEL, so `replay shell --kept ID` rebuilds its world without the capsule
KEPT_LABEL = "replay.kept"
KEPT = "1"  # its value on a keepable attempt's container (`replay shell`'s own containers inherit another)
PLAN_LABEL = "replay.plan"
USER_LABEL = "replay.user"  # who kept it: `shell --last` and `gc` act on the current user's own


def current_user() -> str:
    """The user this process runs as (by its uid: not an environment variable one can set)."""
    import os
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


@dataclass(frozen=True)
class Containment:
    """Limits for a container running code replay does not trust (the replayed command,
    `replay shell`, the HTTP sidecar): applied the same way by run, start and interactive."""

    memory: str | None = "4g"
    pids_limit: int | None = 4096
    cpus: float | None = None
    no_new_privileges: bool = True  # the replayed program cannot gain privileges (setuid, file caps)
    cap_drop: tuple[str, ...] = ()
    cap_add: tuple[str, ...] = ()
    log_max: str = "64m"  # a chatty program cannot fill the disk


@dataclass(frozen=True)
class Mount:
    source: str
    target: str
    read_only: bool = True
    # source names an engine volume instead of a host path: made on first use, labelled as the
    # container is, removed by cleanup (works on a remote engine, or when replay runs in a container)
    volume: bool = False


@dataclass(frozen=True)
class ContainerFile:
    """A file handed to a container through the engine (an archive upload after create, before
    start), never a host path: it works when replay itself runs in a container, or on a remote
    engine. Owned by root; missing parent directories are made root-owned 0755. Mode 0444 is
    the read-only a bind mount gave (the program may not change it)."""

    path: str  # absolute, inside the container
    data: bytes = field(repr=False)  # may be a key: never in a repr or a log
    mode: int = 0o444


@dataclass(frozen=True)
class RunSpec:
    image: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    workdir: str | None = None
    network: str = "none"  # "none", "bridge", or a network name
    aliases: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    mounts: tuple[Mount, ...] = ()
    timeout_s: float = 600.0
    containment: Containment = field(default_factory=Containment)
    dns_opts: tuple[str, ...] = ()
    dns: tuple[str, ...] = ()  # resolver addresses (the replay network's own resolver)
    name: str | None = None
    tty: bool = False
    stdin_open: bool = False
    files: tuple[ContainerFile, ...] = ()  # uploaded by run and start before the container starts
    # run: files read back out of the container once the command ended (absolute paths); one that
    # is missing, not a regular file or over READ_BACK_MAX_BYTES is left out of RunResult.files
    read_back: tuple[str, ...] = ()
    keep: bool = False  # run: leave the container stopped (RunResult.container names it); the caller removes it


@dataclass(frozen=True)
class RunResult:
    exit_code: int | None  # None when killed for the timeout
    output: bytes  # stdout and stderr interleaved, as a terminal shows them
    stdout: bytes
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False
    signal: str | None = None
    reruns: int = 0  # times the attempt ran again because the engine went away under it
    files: Mapping[str, bytes] = field(default_factory=dict)  # RunSpec.read_back, those that were there
    container: str | None = None  # the stopped container, when the spec asked to keep it


READ_BACK_MAX_BYTES = 8 * 1024 * 1024  # one file read back out of an attempt's container, at most


class Channel(Protocol):
    """A byte stream to a program in a container, through the engine (relay.py): no port, no network."""

    def send(self, data: bytes) -> None: ...
    def receive(self) -> bytes: ...  # b"": the program ended, or the channel closed
    def close(self) -> None: ...


@runtime_checkable
class Engine(Protocol):
    @property
    def builder_name(self) -> str: ...

    # images
    def image_exists(self, ref: str) -> bool: ...
    def image_id(self, ref: str) -> str: ...
    def image_env(self, ref: str) -> dict[str, str]: ...
    def import_rootfs(self, tar_path: Path, ref: str, changes: Sequence[str]) -> str: ...
    def try_pull(self, repo: str, tag: str) -> bool: ...
    def tag(self, src: str, ref: str) -> None: ...
    # timeout_s: the build is stopped once it passes (BuildTimedOut); None: no limit
    def build(self, context: Path, tag: str, labels: Mapping[str, str],
              network: str = "default", timeout_s: float | None = None) -> Iterator[BuildEvent]: ...

    # containers
    # on_output (-v): the output as it comes, in chunks cut anywhere, then b"" once it ended
    def run(self, spec: RunSpec, on_output: Callable[[bytes], None] | None = None) -> RunResult: ...
    def start(self, spec: RunSpec) -> str: ...
    def container_ip(self, container_id: str, network: str) -> str: ...
    def logs(self, container_id: str) -> bytes: ...
    def exec(self, container_id: str, argv: Sequence[str]) -> tuple[int, bytes]: ...
    # argv run in the running container, its stdin and stdout the channel (--debugger's relay)
    def channel(self, container_id: str, argv: Sequence[str]) -> Channel: ...
    def stop(self, container_id: str) -> None: ...
    def interactive(self, spec: RunSpec) -> int: ...
    def container_labels(self, container_id: str) -> dict[str, str] | None: ...  # None: no such container
    def newest(self, *labels: str) -> str | None: ...  # the id of the newest container carrying them ("key=value")
    # a stopped container's filesystem as an image (replay shell --kept), labelled; its id
    def commit(self, container_id: str, ref: str, labels: Mapping[str, str]) -> str: ...
    # a stopped container's state in a fresh one never started (its image `ref`, labelled), without the
    # drop_env values in any config and with empty logs; the old one removed; the new one's id
    def seal(self, container_id: str, ref: str, labels: Mapping[str, str], drop_env: Sequence[str]) -> str: ...
    def remove_image(self, ref: str) -> None: ...
    def put_files(self, container_id: str, directory: str, files: Mapping[str, bytes]) -> None: ...
    def get_file(self, container_id: str, path: str) -> bytes: ...  # FileNotFoundError: there is none

    # networks and cleanup
    # isolated: its containers cannot reach each other (only published ports and the host reach them)
    def create_network(self, name: str, labels: Mapping[str, str], internal: bool = True,
                       bridge_name: str | None = None, ipam: Mapping[str, str] | None = None,
                       isolated: bool = False) -> str: ...
    def remove_network(self, name: str) -> None: ...
    # spare: containers kept (--keep) that carry the label and stay
    def cleanup(self, label_value: str, spare: Sequence[str] = ()) -> None: ...
