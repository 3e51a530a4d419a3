"""The one internal model every capsule format is read into.

Readers (twin.py, novafabric.py, codeinstances.py) are the only code that knows a
format; everything after them sees these frozen dataclasses. A fact a format does
not record is ``None`` (or an empty tuple / FrozenMap), never invented.
"""
from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Literal, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """An immutable, hashable, insertion-ordered mapping."""

    __slots__ = ("_d", "_h")

    def __init__(self, items: Mapping[K, V] | Any = ()) -> None:
        self._d: dict[K, V] = dict(items)
        self._h: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._d[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        if self._h is None:
            self._h = hash(tuple(self._d.items()))
        return self._h

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._d) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._d!r})"


class Format(str, Enum):
    TWIN = "twin"
    NOVAFABRIC = "novafabric"
    CODEINSTANCES = "codeinstances"


Outcome = Literal["pass", "fail"]

# Variables whose recorded values describe the recording host, not the run: a replay
# maps them to the container's own instead of copying them.
HOST_SPECIFIC_ENV = frozenset({"HOME", "PATH", "USER", "USERNAME", "LOGNAME", "SHELL", "PWD", "OLDPWD",
                               "HOSTNAME", "TMPDIR"})
EnvState = Literal["set", "empty", "absent"]


@dataclass(frozen=True)
class Body:
    """A recorded body: text when it was valid UTF-8, base64 otherwise."""

    text: str | None = None
    base64: str | None = None

    @property
    def data(self) -> bytes:
        if self.text is not None:
            return self.text.encode("utf-8")
        if self.base64 is not None:
            return base64.b64decode(self.base64)
        return b""


@dataclass(frozen=True)
class Failure:
    signature: str | None
    key_lines: tuple[str, ...] = ()
    output_tail: str | None = None


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    cwd: str | None  # relative to the repo root where the format says so; as recorded otherwise
    cwd_is_host_path: bool = False  # True when cwd is a host path (CodeInstances, NovaFabric ~/...)
    exit_code: int | None = None
    signal: str | None = None
    outcome: Outcome | None = None
    status: str | None = None  # NovaFabric: success | failure | partial | aborted
    duration_ms: float | None = None
    failure: Failure | None = None
    stdout: Body | None = None  # recorded stdout, where the format has it
    stderr: Body | None = None
    error_type: str | None = None  # NovaFabric error.type
    error_message: str | None = None
    # The tool whose own result cache answered instead of a run (twin's `resultCached`, written by
    # replay capture: "go test" printed `ok  pkg  (cached)`): the recorded outcome is an earlier run's.
    cached_by: str | None = None


@dataclass(frozen=True)
class Platform:
    os: str | None = None  # linux, darwin, windows / win32
    distro: str | None = None
    distro_version: str | None = None
    arch: str | None = None
    libc: str | None = None  # glibc | musl
    libc_version: str | None = None
    release: str | None = None
    cpu_count: int | None = None
    memory_bytes: int | None = None


@dataclass(frozen=True)
class PackageManager:
    name: str  # npm pnpm yarn bun uv poetry pipenv pip cargo go
    ecosystem: str | None = None  # node python rust go
    version: str | None = None
    declared: str | None = None
    lockfile: str | None = None  # relative to the repo root
    lockfile_sha256: str | None = None  # lowercase hex, no prefix


@dataclass(frozen=True)
class Resolved:
    """Installed dependency versions (what the command ran against)."""

    node: FrozenMap[str, tuple[str, ...]] = field(default_factory=FrozenMap)
    python: FrozenMap[str, str] = field(default_factory=FrozenMap)


@dataclass(frozen=True)
class Repo:
    remote: str | None = None
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    diff: str | None = None  # None: the format does not record it; "" : clean
    diff_truncated: bool = False
    diff_redacted: bool = False
    untracked: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnvFact:
    name: str
    state: EnvState
    value: str | None = None  # only when recorded
    hash: str | None = None  # salted HMAC (twin --salt), 32 hex
    host_specific: bool = False  # HOME, PATH, USER...: mapped, never copied


@dataclass(frozen=True)
class Locale:
    time_zone: str | None = None  # IANA zone
    locale: str | None = None  # BCP 47 (en-US) as the format records it
    lang: str | None = None  # POSIX LANG (en_US.UTF-8)
    lc_all: str | None = None


@dataclass(frozen=True)
class Redaction:
    rules_version: int | None = None
    values_included: tuple[str, ...] = ()
    hashed_values: bool | None = None
    scrubbed: FrozenMap[str, int] = field(default_factory=FrozenMap)
    proof_findings: int | None = None  # NovaFabric redaction-proof findings total


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: Body | None = None


@dataclass(frozen=True)
class HttpResponse:
    status: int
    reason: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    body: Body | None = None


HttpErrorKind = Literal["dns", "connect-refused", "connect-timeout", "reset", "tls", "timeout"]


@dataclass(frozen=True)
class HttpError:
    kind: HttpErrorKind
    message: str = ""


@dataclass(frozen=True)
class HttpCall:
    seq: int
    at_ms: float | None
    request: HttpRequest
    response: HttpResponse | None = None
    error: HttpError | None = None


@dataclass(frozen=True)
class RecordedValue:
    seq: int
    kind: Literal["clock", "random"]
    value: str  # RFC 3339 (clock) or base64 bytes (random)


@dataclass(frozen=True)
class Artifact:
    """An input placed in the working directory, or an expected output."""

    name: str
    path: str  # path inside the capsule directory (e.g. inputs/poem.txt)
    logical_path: str  # where it goes relative to the working directory (e.g. poem.txt)
    sha256: str | None = None  # lowercase hex
    size_bytes: int | None = None
    media_type: str | None = None


@dataclass(frozen=True)
class ReplayPolicy:
    egress: Literal["allow", "deny", "policy"] | None = None
    allowed_hosts: tuple[str, ...] = ()
    denied_hosts: tuple[str, ...] = ()
    freeze_clock: bool | None = None
    injected_now: str | None = None


@dataclass(frozen=True)
class Worker:
    """A member of a NovaFabric distributed (parent/child) run."""

    run_id: str
    role: str | None = None  # capsule_role
    distribution_role: str | None = None
    rank: int | None = None
    status: str | None = None


@dataclass(frozen=True)
class Provenance:
    format: Format
    format_version: str
    path: str  # the file or directory read
    generator: str | None = None
    created_at: str | None = None
    capsule_id: str | None = None  # CodeInstances id, NovaFabric run_id
    seal_present: bool = False
    global_run_id: str | None = None  # NovaFabric distributed runs
    workers: tuple[Worker, ...] = ()


@dataclass(frozen=True)
class PythonEnv:
    """A recorded Python environment (NovaFabric env.lock)."""

    interpreter: str | None = None  # cpython | pypy3
    version: str | None = None
    package_manager: str | None = None
    lock_file_kind: str | None = None
    lock_file_ref: str | None = None
    lock_file_sha256: str | None = None


@dataclass(frozen=True)
class Pin:
    """The run-time settings under which the recorded failure came back every time (`replay pin`):
    name -> value in verdict/seeds.py's vocabulary, and the runs that showed it."""

    settings: FrozenMap[str, str]
    failed: int
    runs: int


@dataclass(frozen=True)
class Capsule:
    provenance: Provenance
    command: Command
    platform: Platform = field(default_factory=Platform)
    runtimes: FrozenMap[str, str] = field(default_factory=FrozenMap)
    tools: FrozenMap[str, str] = field(default_factory=FrozenMap)
    package_managers: tuple[PackageManager, ...] = ()
    resolved: Resolved = field(default_factory=Resolved)
    repo: Repo | None = None
    env: FrozenMap[str, EnvFact] = field(default_factory=FrozenMap)
    locale: Locale = field(default_factory=Locale)
    redaction: Redaction | None = None
    http_calls: tuple[HttpCall, ...] = ()
    values: tuple[RecordedValue, ...] = ()
    inputs: tuple[Artifact, ...] = ()
    expected_outputs: tuple[Artifact, ...] = ()
    policy: ReplayPolicy | None = None
    python: PythonEnv | None = None
    wallclock_at_start: str | None = None
    working_directory: str | None = None  # as recorded (NovaFabric ~/..., CodeInstances host cwd)
    pin: Pin | None = None  # twin's "pin" member, written by `replay pin -o`

    @property
    def failed(self) -> bool:
        """Did the recorded run fail?"""
        if self.command.outcome is not None:
            return self.command.outcome == "fail"
        if self.command.signal:
            return True
        if self.command.exit_code is not None:
            return self.command.exit_code != 0
        return self.command.status not in (None, "success")
