"""What one replay is asked to do: the options of `replay CAPSULE` (their defaults: defaults.py)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..build.plan import PlanOptions
from ..capsules.trust import Trust
from .defaults import DEFAULT_ATTEMPTS, DEFAULT_MEMORY, DEFAULT_PIDS, DEFAULT_TIMEOUT_S


@dataclass(frozen=True)
class ReplayOptions:
    attempts: int = DEFAULT_ATTEMPTS
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
