"""The replayer: build the image of a plan, run attempts in its world, judge them.

Replayer is the one object the CLI, bisect and the farm drive; its image() and
attempt() are thread-safe so independent trials can run in parallel.
"""
from __future__ import annotations

import dataclasses
import posixpath
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from .. import secretrules
from ..build.sources.baseimage import ensure_base
from ..capsules.opening import Opened, open_capsule
from ..capsules.model import Capsule
from ..config import Settings, settings as load_settings
from ..engine import LABEL, Containment, Engine, EngineHolder, Mount, RunSpec
from ..httpreplay.served import HttpReport
from ..verdict import signature as sig
from ..verdict.judge import Attempt, Expected, classify, expected_of, fingerprint
from ..verdict.sameness import difference
from ..verdict.testsets import TestSet, cut_short, failing_tests, junit_tests
from ..build.plan import Plan
from ..build.images import ImageBank
from ..build.planner import make_plan
from ..build.render import Context, workdir, write_context
from . import image as images
from .decide import Until
from .deferred import signals_deferred
from .image import BuiltImage
from .keep import Keeper, keep_labels, secrets_at_run_time
from .options import ReplayOptions
from .progress import Progress
from ..facts.reads import scan
from .runenv import command_env
from .slots import context_slot, stamp
from .toolcache import GoCache
from .workdir import same_repository, workdir_mounts
from .world import AttemptSettings, World


# The only capabilities an attempt keeps (every other one is dropped, whatever the engine's
# defaults): what a command running as root on its own files uses: owning, changing and reading
# its files, signalling its processes, switching users, binding low ports. Not raw sockets,
# device nodes, the audit log, file capabilities, chroot or changing capability sets (Docker's
# defaults besides), nor anything beyond them.
KEPT_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE")


def _exactly(count: int) -> Until:
    return lambda done, _: f"attempt {len(done) + 1}/{count}" if len(done) < count else None


class Replayer:
    def __init__(self, options: ReplayOptions = ReplayOptions(), progress: Progress | None = None,
                 settings: Settings | None = None, engine: Engine | None = None) -> None:
        self.options = options
        self.progress = progress or Progress()
        self.settings = settings or load_settings()
        self.settings.build_timeout_s  # noqa: B018 - a bad REPLAY_BUILD_TIMEOUT is a usage error before any work
        self.label = options.label or f"r-{uuid.uuid4().hex[:12]}"  # unique: close() removes what carries it
        self._engine = EngineHolder(options.builder or self.settings.builder, engine)
        # --keep: the attempt whose container stays (sealed: no --env value in its config or logs)
        self.keeper = Keeper(lambda: self.engine, tuple(n for n, _ in options.secret_env),
                             f"{self.settings.image_repo}:kept-{self.label}", self.progress.say)
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        # Go's build cache: one volume per toolchain on the machine, for every attempt (toolcache.py)
        self.go_cache = GoCache(lambda: self.engine, options.share_tool_cache, self.progress.step)
        # each distinct image once (build/images.py); a worker's engine may lose one: it is checked again
        self.images: ImageBank[BuiltImage] = ImageBank(
            self._make_image, still_there=(lambda i: self.engine.image_exists(i.ref)) if options.recheck_images
            else None)

    @property
    def engine(self) -> Engine:
        return self._engine.get()

    def open(self, given: Path | str) -> Opened:
        """The capsule, opened under this replay's trust policy (refused when it does not verify)."""
        return open_capsule(given, self.options.trust)

    def load(self, given: Path | str) -> tuple[Capsule, Plan]:
        """Opened and planned; errors about its files name the capsule as given."""
        opened = self.open(given)
        with opened.naming():
            return self.plan(opened.capsule)

    def plan(self, capsule: Capsule) -> tuple[Capsule, Plan]:
        """--workdir DIR without --repo: DIR's own git gives the recorded commit, which DIR must hold."""
        options = self.options.plan
        if self.options.workdir is not None and options.repo is None and capsule.repo and capsule.repo.commit:
            options = dataclasses.replace(options, repo=self.options.workdir)
        plan = make_plan(capsule, self.settings, options)
        if self.options.workdir is not None:
            same_repository(self.options.workdir, plan.source.commit if plan.source else None)
        return capsule, plan

    def expected(self, capsule: Capsule) -> Expected:
        return expected_of(capsule)

    def image(self, plan: Plan) -> BuiltImage:
        """Build (or reuse) the image of this plan; a plan that shares its image (build/images.py) builds nothing."""
        return self.images.get(plan)

    def _make_image(self, plan: Plan) -> BuiltImage:
        with self.progress.step(f"resolve base {plan.base.suite}"):
            ensure_base(self.engine, self.settings, plan.base, self.progress.say)
        with context_slot(self.settings.cache_dir / "contexts") as ctx_dir:
            with self.progress.step("fetch runtimes, package managers and source"):
                ctx = write_context(plan, self.settings, ctx_dir,
                                    "buildkit" if self.engine.builder_name == "buildkit" else "classic")
            digest = images.context_digest(ctx_dir, stamp)  # and each file's mtime from its content
            tag = f"{self.settings.image_repo}:{plan.capsule_id[:12].lower()}-{digest[:12]}"
            reads = scan(ctx_dir / "src")  # while the context is here: it is emptied after the build
            with self._tag_lock(tag):
                return dataclasses.replace(self._image_of(plan, ctx_dir, ctx, tag), reads=reads)

    def _image_of(self, plan: Plan, ctx_dir: Path, ctx: Context, tag: str) -> BuiltImage:
        engine = self.engine
        start = time.monotonic()
        built, steps_run = False, 0
        if not engine.image_exists(tag):
            with self.progress.step(f"build image ({engine.builder_name})"):
                labels = {LABEL: "image", "replay.capsule": plan.capsule_id}
                steps_run = images.build(engine, ctx_dir, tag, labels, self.progress.say, self.options.verbose,
                                         self.settings.build_timeout_s)
            built = True
        else:
            self.progress.say(f"image {tag} is cached: nothing to build")
        facts = images.image_facts(engine, self.settings, tag, self.label)
        return BuiltImage(tag, built, time.monotonic() - start, ctx, facts.drift, steps_run, facts.libc_version,
                          facts.unpinned, warm=facts.warm)

    def _tag_lock(self, tag: str) -> threading.Lock:
        """Two plans of different images may still render one context (one tag): built once too."""
        with self._lock:
            return self._locks.setdefault(tag, threading.Lock())

    def run_spec(self, plan: Plan, image: BuiltImage, world: AttemptSettings = AttemptSettings(),
                 keep: bool | None = None) -> RunSpec:
        """keep: whether the attempt may be kept (None: --keep's answer, ReplayOptions.keep)."""
        keep = self.options.keep if keep is None else keep
        image_env = self.engine.image_env(image.ref)
        env, argv = command_env(plan, image_env, (*world.env, *self.options.secret_env))
        spec = RunSpec(image=image.ref, argv=argv, env=env, workdir=workdir(plan),
                       network=world.network or ("bridge" if plan.network == "allow" else "none"),
                       labels=((LABEL, self.label), ("replay.capsule", plan.capsule_id),
                               *(keep_labels(plan) if keep else ())),
                       timeout_s=self.options.timeout, containment=self.containment(plan.cpus),
                       mounts=(*world.mounts, *workdir_mounts(self.options.workdir)), dns_opts=world.dns_opts, dns=world.dns, files=world.files,
                       keep=keep)
        return secrets_at_run_time(spec, [n for n, _ in self.options.secret_env], image_env) if keep else spec

    def containment(self, cpus: int | None = None) -> Containment:
        """One policy for every container that runs the capsule's code (attempts and `replay shell`);
        `cpus`: a pin's CPU limit (build/seeding.py) in place of the replay's."""
        return Containment(memory=self.options.memory, pids_limit=self.options.pids_limit,
                           cpus=cpus if cpus is not None else self.options.cpus,
                           cap_drop=("ALL",), cap_add=KEPT_CAPS)

    def world(self, plan: Plan) -> World:
        return World(self.engine, self.settings, plan, self.label, self.progress.say)

    def attempts(self, plan: Plan, image: BuiltImage, expected: Expected | None, until: int | Until,
                 label_steps: bool = True, mounts: tuple[Mount, ...] = (),
                 side: str = "", keep: bool | None = None) -> tuple[list[Attempt], HttpReport | None]:
        """Attempts in fresh containers, in the plan's whole hermetic world (HTTP, clock, values):
        `until` a count (exactly that many), or the stopping rule that names each next attempt's
        step (saying why it runs) and ends the series with None; `side` prefixes the steps (a fix
        check's two series); `mounts` besides (bisect's shared test-tool cache); `keep` whether they may be
        kept (None: as --keep says). Go's build cache is shared besides (toolcache.GoCache)."""
        out: list[Attempt] = []
        go = self.go_cache.shared(plan, image.ref)
        plan, mounts = go.apply(plan), (*go.mounts, *mounts)
        next_step = until if callable(until) else _exactly(until)
        with self.entered(plan, label_steps) as world:
            start = time.monotonic()
            while (name := next_step(out, time.monotonic() - start)) is not None:
                spec = self.run_spec(plan, image, world.attempt(), keep)
                spec = dataclasses.replace(spec, mounts=(*spec.mounts, *mounts)) if mounts else spec
                with self.progress.step(f"{side}: {name}" if side else name) if label_steps else nullcontext():
                    out.append(self.run_one(expected, spec))
            return out, world.http_report()

    @contextmanager
    def entered(self, plan: Plan, label_steps: bool = True) -> Iterator[World]:
        """The plan's world, set up, and taken down whatever happens (attempts, `replay shell`,
        `--debugger`); `label_steps`: the HTTP replay's start and stop are progress steps of their own."""
        sidecar = label_steps and plan.network == "replay"
        world = self.world(plan)
        with self.progress.step("start the HTTP replay") if sidecar else nullcontext():
            world.__enter__()
        try:
            yield world
        finally:
            with signals_deferred():  # from before its progress line: the world is closed, whatever comes
                with self.progress.step("stop the HTTP replay") if sidecar else nullcontext():
                    world.__exit__(None, None, None)

    def attempt(self, plan: Plan, image: BuiltImage, expected: Expected | None = None,
                mounts: tuple[Mount, ...] = (), keep: bool | None = None) -> Attempt:
        """One attempt in a fresh container, in the plan's whole hermetic world."""
        return self.attempts(plan, image, expected, 1, label_steps=False, mounts=mounts, keep=keep)[0][0]

    def run_one(self, expected: Expected | None, spec: RunSpec) -> Attempt:
        secrets = [v for _, v in self.options.secret_env if len(v) >= 4]
        on_output: Callable[[bytes], None] | None = None
        if self.options.verbose:
            on_output = whole_lines(lambda line: self.progress.say(scrub(line, secrets)),
                                    keep=max((len(s.encode()) for s in secrets), default=1) - 1)
        paths = report_paths(spec.workdir, expected.reports if expected is not None else ())
        res = self.engine.run(dataclasses.replace(spec, read_back=paths) if paths else spec, on_output)
        att = attempt_of(res.output, res.stdout, res.exit_code, res.signal, res.duration_s,
                         res.timed_out or res.oom_killed, expected, [res.files[p] for p in paths if p in res.files])
        if res.container is not None:
            self.keeper.offer(res.container, att)
        if res.reruns:
            self.progress.say(f"the engine went away during the attempt: ran it again ({res.reruns}x)")
            att = dataclasses.replace(att, reruns=res.reruns)
        return redacted(att, secrets)

    def close(self) -> None:
        with signals_deferred():  # a signal now would leave this run's containers behind
            kept = self.keeper.container
            self._engine.cleanup(self.label, (kept,) if kept else ())


SUPPLIED = secretrules.SUPPLIED


def redacted(att: Attempt, secrets: Sequence[str]) -> Attempt:
    """An attempt as reported: a value supplied with --env never shows, even when the program
    printed it, and neither does what twin's secret rules catch (judged before, on what it
    really printed)."""
    stdout = att.stdout
    for s in secrets:
        stdout = stdout.replace(s.encode(), SUPPLIED.encode())
    return dataclasses.replace(att, output_tail=scrub(att.output_tail, secrets),
                               key_lines=tuple(scrub(k, secrets) for k in att.key_lines),
                               stdout=secretrules.scrub_bytes(stdout) if stdout else stdout,
                               tests=tuple(dataclasses.replace(t, failed=tuple(scrub(i, secrets) for i in t.failed))
                                           for t in att.tests),
                               differs=att.differs and dataclasses.replace(
                                   att.differs, recorded=att.differs.recorded and scrub(att.differs.recorded, secrets),
                                   here=att.differs.here and scrub(att.differs.here, secrets)))


LINE_HOLD = 4096  # the most of an unended line -v holds back (a progress bar, a one-line dump)


def whole_lines(say: Callable[[str], None], keep: int = 0) -> Callable[[bytes], None]:
    """A container's output stream (-v) as whole lines: the engine cuts it anywhere, so a
    secret (or a UTF-8 character) split across two chunks is scrubbed (decoded) whole. A line
    that goes on past LINE_HOLD bytes is said in parts, each holding back its last `keep` bytes
    (a supplied value's length, less one) for the next. The engine's b"" ends the stream and
    says what is left of its last line."""
    pending = bytearray()
    lock = threading.Lock()

    def feed(chunk: bytes) -> None:
        with lock:
            pending.extend(chunk)
            if not chunk:
                done, rest = bytes(pending), b""
            else:
                done, nl, rest = bytes(pending).rpartition(b"\n")
                if not nl and len(rest) > LINE_HOLD:
                    cut = len(rest) - keep
                    done, rest = rest[:cut], rest[cut:]
            pending[:] = rest
        if done:
            say(done.decode("utf-8", "replace").rstrip())
    return feed


def scrub(text: str, secrets: Sequence[str]) -> str:
    """Supplied values first (by value), then the rules (by shape)."""
    for s in secrets:
        text = text.replace(s, SUPPLIED)
    return secretrules.scrub(text)


def report_paths(workdir: str | None, reports: Sequence[str]) -> tuple[str, ...]:
    """Where in the attempt's container the JUnit reports the recorded run wrote are (capsule
    values, relative to its working directory): those that stay inside the working directory."""
    if not workdir:
        return ()
    paths = (posixpath.normpath(posixpath.join(workdir, p)) for p in reports if p and "\0" not in p)
    return tuple(dict.fromkeys(p for p in paths if p.startswith(workdir.rstrip("/") + "/")))


def attempt_of(output: bytes, stdout: bytes, exit_code: int | None, signal: str | None, duration_s: float,
               timed_out: bool, expected: Expected | None, reports: Sequence[bytes] = ()) -> Attempt:
    """An attempt as judged: its signature, the failed tests its output names (and the JUnit
    `reports` it wrote, those of Expected.reports read back from its container), where its
    output differs from the recorded one, and its classification."""
    text = output.decode("utf-8", "replace")
    # Docker reports a signal as 128+n; that is the recorded way only when a signal was recorded.
    by_signal = signal if (expected is None or expected.signal) else None
    code = None if by_signal else exit_code
    window = sig.output_tail(text)
    fs = sig.of_window(window, code, by_signal)
    tail = sig.last_lines(text, window)
    # Judged against a capsule, the failed tests decide only where twin's signature differs, and
    # only the frameworks it names: an exact reproduction costs what it did (scripts/bench_outcome.py).
    tests: tuple[TestSet, ...] = junit_tests(reports) if reports else ()
    if expected is None:
        tests = (*failing_tests(window), *tests)
    elif expected.tests and fs.signature != expected.signature:
        tests = (*failing_tests(window, {t.framework for t in expected.tests}), *tests)
    att = Attempt(code, by_signal, fs.signature, fs.key_lines, duration_s, timed_out, stdout, tail, tests=tests,
                  tests_cut=bool(tests) and cut_short(window))
    if expected is None:
        return att
    kind = classify(expected, att)
    att = dataclasses.replace(att, matched=fingerprint(expected, dataclasses.replace(att, classification=kind)))
    # where the output differs: why a pass did not come back, or what a reproduced failure
    # printed otherwise (a failure of another kind shows both sides' key lines already)
    differs = difference(expected.failed, expected.key_lines, fs.key_lines, expected.stdout, stdout) \
        if not expected.failed or kind == "recorded" else None
    return dataclasses.replace(att, classification=kind, differs=differs) if differs else \
        dataclasses.replace(att, classification=kind)
