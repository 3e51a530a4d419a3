"""`replay bisect --resume`: a bisect's trial outcomes kept, and taken again instead of run again.

Every bisect keeps its trials' outcomes (the verdict, the signature, each run's kind; never the
output) in one file of the cache per question (the mode, the capsules' plans, the other end),
keyed by the trial's image and item (image_key and the plan run on it). Without --resume a
bisect starts that file anew: repeated bisects stay independent, as a check of an answer must
be. With --resume the outcomes kept are taken first, in the order they were run, each once,
and the bisect goes on from where the last one stopped; its new outcomes are kept after them.

A trial's runs depend on more than its plan and image: the --env values supplied (a plan holds a
supplied variable by name only: secrets), the per-run timeout and the replay that ran them. They
are part of the question (`run_context`): a bisect rerun with another token, another --timeout or
after an upgrade asks a new one and reuses nothing. The supplied values enter only as an HMAC
keyed by a per-machine secret (`KEY_FILE`, 0600, made once): neither they nor a plain hash of
them (which a guess could be checked against) is ever stored.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import threading
from collections import defaultdict, deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from .. import __version__
from ..build.plan import Plan
from ..errors import ReplayError
from ..verdict.vocabulary import Classification, Verdict
from .trial import BisectSettings, Observation

FILE_VERSION = 1
KEY_FILE = "key"  # in the outcomes' folder: this machine's secret the supplied values are keyed by


def run_context(folder: Path, supplied: Sequence[tuple[str, str]], timeout: float) -> str:
    """What a trial's runs depend on beside its plan and image, as part of its question: the
    supplied --env values (their HMAC under this machine's key), the per-run timeout, replay's version."""
    values = json.dumps(sorted(dict(supplied).items())).encode()  # the last value of a name is the one run
    mac = hmac.new(machine_key(folder), values, hashlib.sha256).hexdigest()
    return json.dumps({"env": mac, "timeout": float(timeout), "replay": __version__}, sort_keys=True)  # 600 is 600.0


def machine_key(folder: Path) -> bytes:
    """This machine's secret, made once (0600): a second process racing to make it takes the first's."""
    path = folder / KEY_FILE
    try:
        if not path.exists():
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".key-", dir=folder)  # 0600
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(secrets.token_bytes(32))
                os.link(tmp, path)  # whole or not at all, and never over another's
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        key = path.read_bytes()
    except OSError as e:
        raise ReplayError(f"{path}: cannot keep the key of bisect's trial outcomes: {e.strerror or e}") from e
    if len(key) < 32:
        raise ReplayError(f"{path}: not a key of bisect's trial outcomes (remove it: a new one is made)")
    return key


def question(mode: str, *parts: Plan | str) -> str:
    """The name of a bisect's outcomes file: the same for the same question asked again (the mode,
    the runs' context, the capsules' plans, the other end)."""
    text = repr((FILE_VERSION, mode, *(repr(p) for p in parts)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def log_for(settings: BisectSettings, mode: str, *parts: Plan | str) -> TrialLog | None:
    """The outcomes file of this question, when the settings keep outcomes."""
    if settings.outcomes is None:
        return None
    return TrialLog(settings.outcomes, question(mode, settings.context, *parts), settings.resume)


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
