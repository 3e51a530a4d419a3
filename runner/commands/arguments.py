"""The typed arguments of every command, one frozen dataclass each: what its handler gets (so the
type checker sees every option by name). Generated from the declarations by scripts/docs_gen.py
(runner/commands/catalog.py, common.py): do not edit; the suite fails when it is stale."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True, kw_only=True)
class Arguments:
    """The global options, which every command takes."""

    json: bool
    quiet: bool
    verbose: bool
    color: Literal["auto", "always", "never"]
    no_color: bool
    debug: bool

    @property
    def values(self) -> Mapping[str, Any]:
        """By parameter name, for what reads a group of options the same on several commands."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class RunArgs(Arguments):
    """`replay run`."""

    capsule: str
    attempts: int | None
    max_attempts: int | None
    budget: float | None
    confidence: float
    timeout: float
    memory: str
    env: list[str]
    repo: str | None
    mirror: list[str]
    ref: str | None
    patch: str | None
    source: Path | None
    all_runtimes: bool
    no_pin: bool
    no_seeds: bool
    http_ignore: list[str]
    salt: str | None
    http: Path | None
    trust_key: list[Path]
    require_valid: bool
    allow_unverified: bool
    no_alternatives: bool
    keep: bool
    show_all: bool
    comment: Path | None
    junit: Path | None
    debugger: bool
    debugger_port: int | None
    workdir: Path | None
    watch: bool


@dataclass(frozen=True, kw_only=True)
class InspectArgs(Arguments):
    """`replay inspect`."""

    capsule: str
    show_all: bool


@dataclass(frozen=True, kw_only=True)
class DiffArgs(Arguments):
    """`replay diff`."""

    a: str
    b: str
    show_all: bool
    repo: str | None
    mirror: list[str]


@dataclass(frozen=True, kw_only=True)
class VerifyArgs(Arguments):
    """`replay verify`."""

    capsule: str
    trust_key: list[Path]
    patch: Path | None
    ref: str | None


@dataclass(frozen=True, kw_only=True)
class SignatureArgs(Arguments):
    """`replay signature`."""

    file: str
    exit_code: int | None
    signal: str | None


@dataclass(frozen=True, kw_only=True)
class RenderArgs(Arguments):
    """`replay render`."""

    capsule: str
    output: Path | None
    env: list[str]
    repo: str | None
    mirror: list[str]
    ref: str | None
    patch: str | None
    source: Path | None
    all_runtimes: bool
    no_pin: bool
    no_seeds: bool
    http_ignore: list[str]
    builder: Literal["classic", "buildkit"]
    trust_key: list[Path]
    require_valid: bool
    allow_unverified: bool


@dataclass(frozen=True, kw_only=True)
class ShellArgs(Arguments):
    """`replay shell`."""

    capsule: str | None
    kept: str | None
    last: bool
    env: list[str]
    repo: str | None
    mirror: list[str]
    ref: str | None
    patch: str | None
    source: Path | None
    all_runtimes: bool
    no_pin: bool
    no_seeds: bool
    http_ignore: list[str]
    http: Path | None
    trust_key: list[Path]
    require_valid: bool
    allow_unverified: bool


@dataclass(frozen=True, kw_only=True)
class BisectArgs(Arguments):
    """`replay bisect`."""

    bad: str
    good: Path | None
    attempts: int | None
    confidence: float
    max_runs: int
    budget: float | None
    jobs: int | None
    timeout: float
    repo: str | None
    mirror: list[str]
    env: list[str]
    salt: str | None
    http_ignore: list[str]
    commits: bool
    fixed_at: str | None
    resume: bool
    sweep: str | None
    no_cache_reuse: bool
    pin: bool
    keep: bool
    junit: Path | None
    trust_key: list[Path]
    require_valid: bool
    allow_unverified: bool


@dataclass(frozen=True, kw_only=True)
class PinArgs(Arguments):
    """`replay pin`."""

    capsule: str
    pin_runs: int
    budget: float | None
    jobs: int | None
    output: Path | None
    confidence: float
    timeout: float
    memory: str
    env: list[str]
    repo: str | None
    mirror: list[str]
    ref: str | None
    patch: str | None
    source: Path | None
    all_runtimes: bool
    no_pin: bool
    no_seeds: bool
    http_ignore: list[str]
    trust_key: list[Path]
    require_valid: bool
    allow_unverified: bool


@dataclass(frozen=True, kw_only=True)
class DoctorArgs(Arguments):
    """`replay doctor`."""


@dataclass(frozen=True, kw_only=True)
class GcArgs(Arguments):
    """`replay gc`."""

    images: bool
    older_than: float | None
    cache: bool
    max_size: str | None
    dry_run: bool
    label: str | None
    all_users: bool


@dataclass(frozen=True, kw_only=True)
class FarmRunArgs(Arguments):
    """`replay farm run`."""

    sources: list[Path] | None
    jobs: int
    ref: str | None
    find_fix: bool
    repo: str | None
    mirror: list[str]
    repo_url: str | None
    attempts: int
    max_attempts: int
    confidence: float
    timeout: float
    memory: str
    env: list[str]
    trust_key: list[Path]
    require_valid: bool
    resume: bool
    executor: Literal["local", "celery"] | None
    broker: str | None
    db: str | None
    gc: bool


@dataclass(frozen=True, kw_only=True)
class FarmReportArgs(Arguments):
    """`replay farm report`."""

    db: str | None
    html: Path | None
    junit: Path | None
    since: int | None
    window: int
    show_all: bool
    fixed_after: int


@dataclass(frozen=True, kw_only=True)
class FarmHistoryArgs(Arguments):
    """`replay farm history`."""

    capsule: str
    db: str | None


@dataclass(frozen=True, kw_only=True)
class WorkerArgs(Arguments):
    """`replay worker`."""

    broker: str
    concurrency: int
    heartbeat: float
    lease: float
    name: str | None
    loglevel: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


@dataclass(frozen=True, kw_only=True)
class McpArgs(Arguments):
    """`replay mcp`."""


@dataclass(frozen=True, kw_only=True)
class CaptureArgs(Arguments):
    """`replay capture`."""

    command: list[str] | None
    output: Path
    format: Literal["twin"]
    only_on_failure: bool
    include_env: list[str]
    salt: str | None


@dataclass(frozen=True, kw_only=True)
class CiFindArgs(Arguments):
    """`replay ci find`."""

    repo: str
    pr: int
    out: Path


@dataclass(frozen=True, kw_only=True)
class CiPostArgs(Arguments):
    """`replay ci post`."""

    files: list[Path]
    repo: str
    pr: int


@dataclass(frozen=True, kw_only=True)
class CiImageArgs(Arguments):
    """`replay ci image`."""

    tag: str
    base: str | None
    context_only: Path | None


@dataclass(frozen=True, kw_only=True)
class CiSummaryArgs(Arguments):
    """`replay ci summary`."""

    capsule: Path
    farm_run: Path
    repo: str | None
    out: Path | None


@dataclass(frozen=True, kw_only=True)
class HelpArgs(Arguments):
    """`replay help`."""

    command: list[str] | None


@dataclass(frozen=True, kw_only=True)
class VersionArgs(Arguments):
    """`replay version`."""


@dataclass(frozen=True, kw_only=True)
class CompletionArgs(Arguments):
    """`replay completion`."""

    shell: Literal["bash", "zsh", "fish"]
