"""The image of a plan: built once (with retries on mirror hiccups), then probed once
for what it really holds (glibc, drifted packages)."""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from ..config import Settings
from ..engine import LABEL, Engine, RunSpec
from ..errors import BuildFailed, BuildTimedOut
from ..build.gowarm import WARM_DIR, built_rows
from ..build.pins import unpinned_rows
from ..build.plan import Drift, Fidelity
from ..build.render import Context
from ..facts.reads import Read


@dataclass(frozen=True)
class BuiltImage:
    ref: str
    built: bool
    build_s: float
    context: Context | None = None
    drift: tuple[Drift, ...] = ()
    steps_run: int = 0  # build steps that ran; 0 when everything came from the cache
    libc_version: str | None = None  # read inside the built image
    unpinned: tuple[Fidelity, ...] = ()  # recorded packages the build could not pin, and why
    reads: tuple[Read, ...] = ()  # the variables the restored source reads (reads.py): why.py's evidence
    warm: tuple[Fidelity, ...] = ()  # the caches the build filled ahead (build/gowarm.py), as the build found them


@dataclass(frozen=True)
class ImageFacts:
    libc_version: str | None
    drift: tuple[Drift, ...]
    unpinned: tuple[Fidelity, ...] = ()
    warm: tuple[Fidelity, ...] = ()


def drift_of(entries: Any) -> tuple[Drift, ...]:
    """The build's drift report (JSON written by templates/scripts/npm-deps.js), checked."""
    out = []
    for e in entries or ():
        if isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("name", "recorded", "installed")):
            out.append(Drift(e["name"], e["recorded"], e["installed"]))
    return tuple(out)


# A fixed probe (no capsule data): glibc's version, the drift report the build wrote, then what its
# compile-ahead steps said (go-warm.sh), each after a "=== NAME" line.
_FACTS_PROBE = ("getconf GNU_LIBC_VERSION | cut -d' ' -f2; echo ---; cat /opt/replay/drift.json 2>/dev/null || true; "
                f"echo; echo ---; for f in {WARM_DIR}/go-*; do [ -f \"$f\" ] && echo \"=== ${{f##*/go-}}\" && cat \"$f\"; done; true")


def _transient_build(exc: BaseException) -> bool:
    return isinstance(exc, BuildFailed) and not isinstance(exc, BuildTimedOut) and exc.transient


def build(engine: Engine, ctx_dir: Path, tag: str, labels: dict[str, str], say: Callable[[str], None],
          verbose: bool, timeout_s: float | None = None) -> int:
    """Build, retrying (with backoff) when the log shows a mirror or registry hiccup; the steps run.
    The tries together are stopped after `timeout_s` (REPLAY_BUILD_TIMEOUT), and a stopped one is
    not retried."""
    end = None if timeout_s is None else time.monotonic() + timeout_s

    def once() -> int:
        steps = 0
        left = None if end is None else end - time.monotonic()
        if left is not None and left <= 0:
            raise BuildTimedOut(timeout_s or 0.0, "none: no time was left to try the build again")
        try:
            for event in engine.build(ctx_dir, tag, labels, timeout_s=left):
                if event.kind == "log" and verbose:
                    say(event.text)
                elif event.kind == "step" and not verbose:  # -v shows the whole log instead
                    say(f"build: {event.text}")
                steps = event.steps_run if event.kind == "done" else steps
        except BuildTimedOut as exc:  # the limit as set, not what was left of it for this try
            raise BuildTimedOut(timeout_s or 0.0, exc.step, exc.log_tail) from exc
        return steps

    retrying = Retrying(retry=retry_if_exception(_transient_build), stop=stop_after_attempt(3),
                        wait=wait_exponential(multiplier=2, max=20), reraise=True,
                        before_sleep=lambda rs: say(f"build hit a transient failure; retrying ({rs.attempt_number}/3)"))
    return int(retrying(once))


def image_facts(engine: Engine, settings: Settings, tag: str, label: str) -> ImageFacts:
    """What the built image really holds, read once per image (cached by image id)."""
    image_id = engine.image_id(tag)
    _record_use(settings, tag, image_id)
    cache = settings.cache_dir / "images" / f"{image_id.replace(':', '-')}.json"
    if cache.exists():
        data = json.loads(cache.read_text())
    else:
        res = engine.run(RunSpec(image=tag, argv=("sh", "-c", _FACTS_PROBE), labels=((LABEL, label),), timeout_s=60))
        libc, _, rest = res.stdout.decode("utf-8", "replace").partition("\n---\n")
        drift, _, warm = rest.rpartition("\n---\n") if "\n---\n" in rest else (rest, "", "")
        try:
            report = json.loads(drift.strip() or "{}")
        except ValueError:
            report = {}
        data = {"libc_version": libc.strip() or None, "drift": report.get("drift", []),
                "unpinned": report.get("unpinned", []), "warm": _warm_steps(warm)}
        cache.parent.mkdir(parents=True, exist_ok=True)
        part = cache.with_name(f"{cache.name}.{uuid.uuid4().hex}.part")
        part.write_text(json.dumps(data))
        part.replace(cache)  # atomic: parallel trials never read half a file
    warm = data.get("warm")
    return ImageFacts(data.get("libc_version"), drift_of(data.get("drift")), unpinned_rows(data.get("unpinned")),
                      built_rows({str(k): str(v) for k, v in warm.items()}) if isinstance(warm, dict) else ())


def _warm_steps(text: str) -> dict[str, str]:
    """go-warm.sh's reports as the probe printed them: step name -> its report."""
    steps: dict[str, str] = {}
    for part in text.split("=== ")[1:]:
        name, _, body = part.partition("\n")
        steps[name.strip()] = body.strip()
    return steps


def _record_use(settings: Settings, tag: str, image_id: str) -> None:
    """The usage ledger (`replay gc --images`): every replay, bisect, night and worker passes here."""
    from ..machine import ledger

    _quietly(lambda: ledger.record(settings.cache_dir, tag, image_id))


def record_volume_use(settings: Settings, volume: str) -> None:
    """The usage ledger's record of a tool-cache volume handed to an attempt (`replay gc --cache`)."""
    from ..machine import ledger

    _quietly(lambda: ledger.record_volume(settings.cache_dir, volume))


def _quietly(write: Callable[[], None]) -> None:
    """A ledger that cannot be written must not fail the replay; gc then goes by the image's or volume's age."""
    import sqlite3

    try:
        write()
    except (sqlite3.Error, OSError):
        pass
