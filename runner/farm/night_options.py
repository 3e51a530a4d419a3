"""What a farm night is asked to do: the options `farm run` takes, stored with the night (a
`--resume` runs with the stored ones), and checked once when they are made."""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .. import __version__
from ..capsules.trust import Trust
from ..errors import UsageError
from ..replay.defaults import DEFAULT_ATTEMPTS, DEFAULT_FARM_MAX_ATTEMPTS, DEFAULT_MEMORY, DEFAULT_PRECISION, DEFAULT_TIMEOUT_S
from ..verdict.rate import CONFIDENCE_RANGE, DEFAULT_CONFIDENCE
from ..verdict.sampling import Sampling


_URL = re.compile(r"^(https?|git|ssh)://[^\s]+$|^[\w.-]+@[\w.-]+:[^\s]+$")  # scp-like user@host:path too


@dataclass(frozen=True)
class FarmOptions:
    attempts: int = DEFAULT_ATTEMPTS
    max_attempts: int = DEFAULT_FARM_MAX_ATTEMPTS
    jobs: int = 0  # 0: the number of cores
    timeout: float = DEFAULT_TIMEOUT_S
    memory: str = DEFAULT_MEMORY
    ref: str | None = None
    repo: str | None = None
    executor: str = "local"  # local | celery (the broker's URL is never stored: it may hold a password)
    supplied: tuple[str, ...] = ()  # the names of the --env values; the values are never stored
    trust_keys: tuple[str, ...] = ()  # --trust-key PEM files, as replay takes them
    require_valid: bool = False  # --require-valid: a capsule without a valid signature from one is broken
    confidence: float = DEFAULT_CONFIDENCE  # rates and the fix at --ref are stated at it
    mirrors: tuple[str, ...] = ()  # --mirror PREFIX=PATH_OR_URL rules, as given (the reproduce-here command repeats them)
    repo_url: str | None = None  # --repo-url: how the reproduce-here command names --repo (a CI checkout's repository)

    def __post_init__(self) -> None:
        _ = self.trust  # the key files and --require-valid checked once, as replay checks them
        if self.attempts < 1 or self.max_attempts < self.attempts:
            raise UsageError(f"--attempts {self.attempts} / --max-attempts {self.max_attempts}: "
                             "need 1 <= attempts <= max-attempts")
        if not CONFIDENCE_RANGE[0] <= self.confidence <= CONFIDENCE_RANGE[1]:
            raise UsageError(f"--confidence {self.confidence}: from {CONFIDENCE_RANGE[0]} to {CONFIDENCE_RANGE[1]}")
        if self.executor not in ("local", "celery"):
            raise UsageError(f"--executor {self.executor!r}: one of local, celery")
        if self.repo_url is not None and not _URL.match(self.repo_url):
            raise UsageError(f"--repo-url {self.repo_url[:80]!r}: expected an http(s), git or ssh URL of the repository")
        if self.supplied and self.executor != "local":
            raise UsageError("--env does not go with --executor celery: a supplied value never leaves this machine")

    @property
    def trust(self) -> Trust:
        return Trust(tuple(Path(k) for k in self.trust_keys), self.require_valid)

    @property
    def sampling(self) -> Sampling:
        """K attempts, more while they disagree until the rate is known (verdict/sampling.py), up to
        --max-attempts; REF's attempts up to --max-attempts too."""
        return Sampling(least=self.attempts, most=self.max_attempts, precision=DEFAULT_PRECISION,
                        confidence=self.confidence)

    @property
    def workers(self) -> int:
        return self.jobs or os.cpu_count() or 1

    def stored(self) -> dict[str, Any]:
        return {**asdict(self), "replay_version": __version__}

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> FarmOptions:
        known = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        lists = {name: tuple(known.get(name, ())) for name in ("supplied", "trust_keys", "mirrors")}  # JSON's arrays
        return cls(**{**known, **lists})
