"""The main job: build the image of a plan, run attempts, judge them.

Replayer is the one object the CLI, bisect and (later) the farm drive; its
image() and attempt() are thread-safe so independent trials can run in parallel.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from . import signature as sig
from .capsules import read_capsule
from .capsules.model import Capsule
from .config import Settings, settings as load_settings
from .engine import LABEL, DockerEngine, EngineHolder, RunSpec
from .plan import Plan
from .planner import PlanOptions, make_plan
from .render import Context, workdir, write_context
from .baseimage import ensure_base

Classification = Literal["recorded", "pass", "other", "inconclusive"]
Verdict = Literal["reproduced", "different-failure", "not-reproduced", "flaky", "inconclusive", "fixed", "not-fixed"]


@dataclass(frozen=True)
class Expected:
    failed: bool
    exit_code: int | None
    signal: str | None
    signature: str | None
    key_lines: tuple[str, ...] = ()
    stdout: bytes | None = None  # compared byte for byte when the format records it
    signature_source: str = "recorded"  # recorded | recomputed from outputTail | none


@dataclass(frozen=True)
class Attempt:
    exit_code: int | None
    signal: str | None
    signature: str
    key_lines: tuple[str, ...]
    duration_s: float
    timed_out: bool = False
    stdout: bytes = b""
    output_tail: str = ""
    classification: Classification = "inconclusive"


@dataclass(frozen=True)
class Drift:
    """A package whose installed version differed from the recorded one."""

    name: str
    recorded: str
    installed: str


def drift_of(entries: Any) -> tuple[Drift, ...]:
    """The build's drift report (JSON written by templates/scripts/npm-deps.js), checked."""
    out = []
    for e in entries or ():
        if isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("name", "recorded", "installed")):
            out.append(Drift(e["name"], e["recorded"], e["installed"]))
    return tuple(out)


@dataclass(frozen=True)
class BuiltImage:
    ref: str
    built: bool
    build_s: float
    context: Context | None = None
    drift: tuple[Drift, ...] = ()
    steps_run: int = 0  # build steps that ran; 0 when everything came from the cache
    libc_version: str | None = None  # read inside the built image


@dataclass(frozen=True)
class ImageFacts:
    libc_version: str | None
    drift: tuple[Drift, ...]


# A fixed probe (no capsule data): glibc's version, then the drift report the build wrote.
_FACTS_PROBE = "getconf GNU_LIBC_VERSION | cut -d' ' -f2; echo ---; cat /opt/replay/drift.json 2>/dev/null || true"
_TRANSIENT = ("Temporary failure resolving", "Could not connect", "Connection timed out", "ETIMEDOUT",
              "ECONNRESET", "EAI_AGAIN", "503 Service Unavailable", "502 Bad Gateway", "Connection reset by peer",
              "Hash Sum mismatch", "ReadTimeoutError")


def _transient_build(exc: BaseException) -> bool:
    from .errors import BuildFailed

    return isinstance(exc, BuildFailed) and any(t in exc.log_tail for t in _TRANSIENT)


@dataclass(frozen=True)
class ReplayOptions:
    attempts: int = 3
    timeout: float = 600.0
    memory: str = "4g"
    pids_limit: int = 4096
    verbose: bool = False
    plan: PlanOptions = field(default_factory=PlanOptions)
    builder: str = "auto"
    label: str = ""  # replay=<label> on everything made; a fresh one per process by default
    require_valid: bool = False  # refuse (exit 1) a capsule that does not verify, or an untrusted signer


class Progress:
    """Steps with timings on stderr (never stdout: that is the report's)."""

    def __init__(self, console: object | None = None, quiet: bool = False) -> None:
        self._console = console
        self._quiet = quiet
        self.timings: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        if not self._quiet and self._console is not None:
            self._console.print(f"replay: {text}", markup=False, highlight=False, emoji=False)  # type: ignore[attr-defined]

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        self.say(f"{name} …")
        try:
            yield
        finally:
            took = time.monotonic() - start
            with self._lock:
                self.timings.append((name, took))
            self.say(f"{name} done in {took:.1f}s")


def expected_of(capsule: Capsule) -> Expected:
    cmd = capsule.command
    stdout = cmd.stdout.data if cmd.stdout is not None else None
    if not capsule.failed:
        return Expected(False, cmd.exit_code if cmd.exit_code is not None else 0, None, None, (), stdout, "none")
    recorded = cmd.failure
    if recorded and recorded.output_tail is not None:
        again = sig.compute(recorded.output_tail, cmd.exit_code, cmd.signal)
        if recorded.signature and tuple(recorded.key_lines) == again.key_lines and recorded.signature == again.signature:
            return Expected(True, cmd.exit_code, cmd.signal, recorded.signature, again.key_lines, stdout, "recorded")
        return Expected(True, cmd.exit_code, cmd.signal, again.signature, again.key_lines, stdout,
                        "recomputed from outputTail (the recorded one was made by another rule)")
    if recorded and recorded.signature:
        return Expected(True, cmd.exit_code, cmd.signal, recorded.signature, tuple(recorded.key_lines), stdout, "recorded")
    if cmd.stdout is not None or cmd.stderr is not None:
        text = (cmd.stdout.data if cmd.stdout else b"") + (cmd.stderr.data if cmd.stderr else b"")
        again = sig.compute(text.decode("utf-8", "replace"), cmd.exit_code, cmd.signal)
        return Expected(True, cmd.exit_code, cmd.signal, again.signature, again.key_lines, stdout,
                        "computed from the recorded stdout and stderr")
    return Expected(True, cmd.exit_code, cmd.signal, None, (), stdout, "none")


def classify(expected: Expected, attempt: Attempt) -> Classification:
    if attempt.timed_out:
        return "inconclusive"
    stdout_ok = expected.stdout is None or attempt.stdout == expected.stdout
    if not expected.failed:
        return "recorded" if attempt.exit_code == (expected.exit_code or 0) and stdout_ok else "other"
    if attempt.exit_code == 0 and attempt.signal is None:
        return "pass"
    if expected.signal:
        same_end = attempt.signal == expected.signal
    else:  # a failure recorded with no exit code matches any non-zero exit
        same_end = expected.exit_code is None or attempt.exit_code == expected.exit_code
    same_sig = expected.signature is None or attempt.signature == expected.signature
    return "recorded" if same_end and same_sig and stdout_ok else "other"


def judge(expected: Expected, attempts: Sequence[Attempt], patched: bool = False) -> Verdict:
    kinds = [a.classification for a in attempts]
    if not kinds or all(k == "inconclusive" for k in kinds):
        return "inconclusive"
    decided = [k for k in kinds if k != "inconclusive"]
    if patched:
        return "fixed" if all(k == "pass" for k in decided) and len(decided) == len(kinds) else "not-fixed"
    if len(set(decided)) > 1 or len(decided) != len(kinds):
        return "flaky"
    only = decided[0]
    if only == "recorded":
        return "reproduced"
    if not expected.failed:
        return "not-reproduced"
    return "not-reproduced" if only == "pass" else "different-failure"


class Replayer:
    def __init__(self, options: ReplayOptions = ReplayOptions(), progress: Progress | None = None,
                 settings: Settings | None = None) -> None:
        self.options = options
        self.progress = progress or Progress()
        self.settings = settings or load_settings()
        self.label = options.label or f"r-{uuid.uuid4().hex[:12]}"  # unique: close() removes what carries it
        self._engine = EngineHolder(options.builder)
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._built: dict[str, BuiltImage] = {}
        self._workdir = Path(tempfile.mkdtemp(prefix="replay-"))

    @property
    def engine(self) -> DockerEngine:
        return self._engine.get()

    def load(self, path: Path | str) -> tuple[Capsule, Plan]:
        capsule = read_capsule(path)
        return capsule, make_plan(capsule, self.settings, self.options.plan)

    def expected(self, capsule: Capsule) -> Expected:
        return expected_of(capsule)

    def image(self, plan: Plan) -> BuiltImage:
        """Build (or reuse) the image of this plan; a second call for the same plan builds nothing."""
        ctx_dir = self._workdir / f"ctx-{hashlib.sha256(repr(plan).encode()).hexdigest()[:16]}"
        with self._key_lock(ctx_dir.name):
            if ctx_dir.name in self._built:
                return self._built[ctx_dir.name]
            with self.progress.step(f"resolve base {plan.base.suite}"):
                ensure_base(self.engine, self.settings, plan.base, self.progress.say)
            with self.progress.step("fetch runtimes, package managers and source"):
                ctx = write_context(plan, self.settings, ctx_dir)
            tag = f"{self.settings.image_repo}:{plan.capsule_id[:12].lower()}-{_digest(ctx_dir)[:12]}"
            with self._key_lock(tag):
                return self._image_of(plan, ctx_dir, ctx, tag)

    def _image_of(self, plan: Plan, ctx_dir: Path, ctx: Context, tag: str) -> BuiltImage:
        engine = self.engine
        start = time.monotonic()
        built, steps_run = False, 0
        if not engine.image_exists(tag):
            with self.progress.step(f"build image ({engine.builder_name})"):
                steps_run = self._build(ctx_dir, tag, plan)
            built = True
        else:
            self.progress.say(f"image {tag} is cached: nothing to build")
        facts = self._image_facts(tag)
        result = BuiltImage(tag, built, time.monotonic() - start, ctx, facts.drift, steps_run, facts.libc_version)
        self._built[ctx_dir.name] = result
        return result

    def _build(self, ctx_dir: Path, tag: str, plan: Plan) -> int:
        """Build, retrying (with backoff) when the log shows a mirror or registry hiccup."""
        labels = {LABEL: "image", "replay.capsule": plan.capsule_id}

        def once() -> int:
            steps = 0
            for event in self.engine.build(ctx_dir, tag, labels):
                if event.kind == "log" and self.options.verbose:
                    self.progress.say(event.text)
                steps = event.steps_run if event.kind == "done" else steps
            return steps

        retrying = Retrying(retry=retry_if_exception(_transient_build), stop=stop_after_attempt(3),
                            wait=wait_exponential(multiplier=2, max=20), reraise=True,
                            before_sleep=lambda rs: self.progress.say(
                                f"build hit a transient failure; retrying ({rs.attempt_number}/3)"))
        return int(retrying(once))

    def _image_facts(self, tag: str) -> ImageFacts:
        """What the built image really holds (glibc, drifted packages), read once per image."""
        image_id = self.engine.image_id(tag)
        cache = self.settings.cache_dir / "images" / f"{image_id.replace(':', '-')}.json"
        if cache.exists():
            data = json.loads(cache.read_text())
        else:
            res = self.engine.run(RunSpec(image=tag, argv=("sh", "-c", _FACTS_PROBE), labels=((LABEL, self.label),),
                                          timeout_s=60))
            libc, _, drift = res.stdout.decode("utf-8", "replace").partition("\n---\n")
            try:
                drifted = json.loads(drift or "{}").get("drift", [])
            except ValueError:
                drifted = []
            data = {"libc_version": libc.strip() or None, "drift": drifted}
            cache.parent.mkdir(parents=True, exist_ok=True)
            part = cache.with_name(f"{cache.name}.{uuid.uuid4().hex}.part")
            part.write_text(json.dumps(data))
            part.replace(cache)  # atomic: parallel trials never read half a file
        return ImageFacts(data.get("libc_version"), drift_of(data.get("drift")))

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._locks.setdefault(key, threading.Lock())

    def run_spec(self, plan: Plan, image: BuiltImage, extra_env: Sequence[tuple[str, str]] = (),
                 network: str | None = None, **kw: object) -> RunSpec:
        from .runenv import command_env

        env, argv = command_env(plan, self.engine.image_env(image.ref), extra_env)
        return RunSpec(image=image.ref, argv=argv, env=env, workdir=workdir(plan),
                       network=network or ("bridge" if plan.network == "allow" else "none"),
                       labels=((LABEL, self.label), ("replay.capsule", plan.capsule_id)),
                       timeout_s=self.options.timeout, memory=self.options.memory,
                       pids_limit=self.options.pids_limit, **kw)  # type: ignore[arg-type]

    def attempt(self, plan: Plan, image: BuiltImage, expected: Expected | None = None) -> Attempt:
        """One attempt in a fresh container, in the plan's whole hermetic world (HTTP, clock, values)."""
        from .attempts import run_attempts

        attempts, _ = run_attempts(self, plan, image, expected, 1, self.progress, label_steps=False)
        return attempts[0]

    def run_one(self, plan: Plan, image: BuiltImage, expected: Expected | None, spec: RunSpec) -> Attempt:
        on_output = (lambda b: self.progress.say(b.decode("utf-8", "replace").rstrip())) if self.options.verbose else None
        res = self.engine.run(spec, on_output)
        text = res.output.decode("utf-8", "replace")
        # Docker reports a signal as 128+n; that is the recorded way only when a signal was recorded.
        by_signal = res.signal if (expected is None or expected.signal) else None
        code = None if by_signal else res.exit_code
        fs = sig.compute(text, code, by_signal)
        tail = "\n".join(text.splitlines()[-40:])
        att = Attempt(code, by_signal, fs.signature, fs.key_lines, res.duration_s, res.timed_out or res.oom_killed,
                      res.stdout, tail)
        if expected is not None:
            att = dataclasses.replace(att, classification=classify(expected, att))
        return att

    def close(self) -> None:
        import shutil

        if self._engine._engine is not None:
            self._engine._engine.cleanup(self.label)
        shutil.rmtree(self._workdir, ignore_errors=True)


def _digest(ctx: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(ctx.rglob("*")):
        rel = p.relative_to(ctx).as_posix().encode()
        if p.is_symlink():
            h.update(b"L" + rel + str(p.readlink()).encode())
        elif p.is_file():
            h.update(b"F" + rel + hashlib.sha256(p.read_bytes()).digest() + bytes([p.stat().st_mode & 0o111 != 0]))
    return h.hexdigest()
