"""`replay bisect --resume`: a bisect's trial outcomes kept, and taken again instead of run again.

Every bisect keeps its trials' outcomes (the verdict, the signature, each run's kind; never the
output) in one file of the cache per question (the mode, the capsules' plans, the other end),
keyed by the trial's image and item (image_key and the plan run on it). Without --resume a
bisect starts that file anew: repeated bisects stay independent, as a check of an answer must
be. With --resume the outcomes kept are taken first, in the order they were run, each once,
and the bisect goes on from where the last one stopped; its new outcomes are kept after them.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from ..build.plan import Plan
from ..verdict.vocabulary import Classification, Verdict
from .trial import BisectSettings, Observation

FILE_VERSION = 1


def question(mode: str, *parts: Plan | str) -> str:
    """The name of a bisect's outcomes file: the same for the same question asked again."""
    text = repr((FILE_VERSION, mode, *(repr(p) for p in parts)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def log_for(settings: BisectSettings, mode: str, *parts: Plan | str) -> TrialLog | None:
    """The outcomes file of this question, when the settings keep outcomes."""
    if settings.outcomes is None:
        return None
    return TrialLog(settings.outcomes, question(mode, *parts), settings.resume)


class TrialLog:
    """The outcomes of one bisect, in `folder`/`name`.json; `resume`: an earlier one's are taken first."""

    def __init__(self, folder: Path, name: str, resume: bool) -> None:
        self.path = folder / f"{name}.json"
        self._lock = threading.Lock()
        self.kept: list[dict[str, Any]] = []
        self.unreadable = False
        self.taken = self.taken_runs = 0
        self._ready: dict[str, deque[Observation]] = defaultdict(deque)
        if resume:
            for entry in self._read():
                self.kept.append(entry)
                self._ready[entry["key"]].append(_observation(entry))

    def take(self, key: str) -> Observation | None:
        """A kept outcome of this trial not taken yet, else None (it runs)."""
        with self._lock:
            if not self._ready[key]:
                return None
            obs = self._ready[key].popleft()
            self.taken, self.taken_runs = self.taken + 1, self.taken_runs + len(obs.attempts)
            return obs

    def keep(self, key: str, obs: Observation) -> None:
        """A new outcome, kept after the others (written at once: an interrupted bisect resumes too)."""
        entry = {"key": key, "verdict": obs.verdict, "signature": obs.signature, "attempts": list(obs.attempts)}
        with self._lock:
            self.kept.append(entry)
            self._write()

    def notes(self) -> list[str]:
        out = ["the trial outcomes kept could not be read: this bisect started over"] if self.unreadable else []
        if self.taken:
            out.append(f"{self.taken} trial(s), {self.taken_runs} run(s), taken from the outcomes an earlier bisect "
                       "kept (--resume); the rest ran")
        return out

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = data["trials"] if data.get("version") == FILE_VERSION else []
            return [e for e in entries if _valid(e)]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.unreadable = True
            return []

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".trials-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": FILE_VERSION, "trials": self.kept}, fh)
        os.replace(tmp, self.path)


_VERDICTS, _KINDS = set(get_args(Verdict)), set(get_args(Classification))


def _valid(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("key"), str) and entry.get("verdict") in _VERDICTS
            and isinstance(entry.get("signature"), (str, type(None))) and isinstance(entry.get("attempts"), list)
            and all(k in _KINDS for k in entry["attempts"]))


def _observation(entry: dict[str, Any]) -> Observation:
    attempts: Sequence[Classification] = entry["attempts"]
    return Observation(entry["verdict"], entry["signature"], attempts=tuple(attempts))
