"""What one replay is asked to do: the options of `replay CAPSULE` (their defaults: defaults.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..build.plan import PlanOptions
from ..capsules.trust import Trust
from ..errors import UsageError
from ..verdict.rate import CONFIDENCE_RANGE, DEFAULT_CONFIDENCE
from ..verdict.sampling import Sampling
from .defaults import DEFAULT_ATTEMPTS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MEMORY, DEFAULT_PIDS, DEFAULT_PRECISION, DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class ReplayOptions:
    # None: stop when decided (verdict/sampling.py): at least min_attempts, up to max_attempts and
    # budget while the runs disagree; N: exactly N runs (each side of a fix check)
    attempts: int | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    memory: str = DEFAULT_MEMORY
    pids_limit: int = DEFAULT_PIDS
    cpus: float | None = None  # None: every core (a replay is timed against the recording, not throttled)
    verbose: bool = False
    plan: PlanOptions = field(default_factory=PlanOptions)
    builder: str | None = None  # auto | buildkit | classic; None: the setting (REPLAY_BUILDER, default auto)
    label: str = ""  # replay=<label> on everything made; a fresh one per process by default
    trust: Trust = Trust()  # the keys and the policy a capsule is opened with (capsules/opening.py)
    # Supplied --env values: applied at run time only, never part of the plan or its digest.
    secret_env: tuple[tuple[str, str], ...] = ()
    min_attempts: int = DEFAULT_ATTEMPTS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    budget: float | None = None  # seconds of attempts per series (--budget); None: max_attempts alone bounds
    confidence: float = DEFAULT_CONFIDENCE
    alternatives: bool = True  # --no-alternatives: the plan's own environment only (replay/alternatives.py)
    workdir: str | None = None  # --workdir: a checkout run in place of the recorded source (replay/workdir.py)
    keep: bool = False  # --keep: one attempt's container stays, stopped (replay/keep.py)
    recheck_images: bool = False  # a worker's: an image made before is looked for again (its engine may lose it)
    share_tool_cache: bool = True  # attempts share Go's build cache per toolchain (toolcache.py); bisect --no-cache-reuse

    def __post_init__(self) -> None:
        if self.attempts is not None and self.attempts < 1:
            raise UsageError(f"--attempts {self.attempts}: at least 1")
        if self.max_attempts < 1:
            raise UsageError(f"--max-attempts {self.max_attempts}: at least 1")
        if not CONFIDENCE_RANGE[0] <= self.confidence <= CONFIDENCE_RANGE[1]:
            raise UsageError(f"--confidence {self.confidence}: from {CONFIDENCE_RANGE[0]} to {CONFIDENCE_RANGE[1]}")
        if self.workdir is not None and (self.plan.patch or self.plan.ref or self.plan.source_dir):
            # DIR is mounted over the source on every side: a fix check would compare DIR with DIR
            raise UsageError("--workdir runs DIR as the source: it does not go with --patch, --ref or --source "
                             "(check the fix afterwards with --patch \"$(git -C DIR diff)\")")

    @property
    def sampling(self) -> Sampling:
        """When each series of attempts stops (verdict/sampling.py)."""
        return Sampling(least=self.min_attempts, most=self.max_attempts, precision=DEFAULT_PRECISION,
                        confidence=self.confidence, budget_s=self.budget, exactly=self.attempts)
