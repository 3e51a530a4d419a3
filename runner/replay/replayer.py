"""The replayer: the runner of attempts. It asks the image service (imageservice.py) for a
plan's image, runs attempts in the plan's world, and hands each result to verdict/attempted.py;
opening and planning a capsule is the loader's (loading.py), before it.

Its image() and attempt() are thread-safe so independent trials can run in parallel.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

from ..config import Settings, settings as load_settings
from ..engine import LABEL, Containment, Engine, EngineHolder, Mount, RunSpec
from ..httpreplay.served import HttpReport
from ..verdict.attempted import attempt_of, redacted, report_paths, scrub
from ..verdict.judge import Attempt, Expected
from ..build.plan import Plan
from ..build.render import workdir
from .decide import Until
from .deferred import signals_deferred
from .image import BuiltImage
from .imageservice import ImageService
from .keep import Keeper, keep_labels, secrets_at_run_time
from .options import ReplayOptions
from .progress import Progress
from .runenv import command_env
from .workdir import workdir_mounts
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
        # every image, once, and the tool caches attempts share (imageservice.py)
        self.images = ImageService(lambda: self.engine, self.settings, options, self.progress, self.label)

    @property
    def engine(self) -> Engine:
        return self._engine.get()

    def image(self, plan: Plan) -> BuiltImage:
        """Build (or reuse) the image of this plan; a plan that shares its image (build/images.py) builds nothing."""
        return self.images.get(plan)

    def fetch(self, plan: Plan) -> tuple[BuiltImage, bool]:
        """The plan's image as it was made, and whether this call made it."""
        return self.images.fetch(plan)

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
        return World(self.engine, self.settings, plan, self.label, self.progress.say, self.images.sidecar)

    def attempts(self, plan: Plan, image: BuiltImage, expected: Expected | None, until: int | Until,
                 label_steps: bool = True, mounts: tuple[Mount, ...] = (),
                 side: str = "", keep: bool | None = None,
                 fill_go: bool = True) -> tuple[list[Attempt], HttpReport | None]:
        """Attempts in fresh containers, in the plan's whole hermetic world (HTTP, clock, values):
        `until` a count (exactly that many), or the stopping rule that names each next attempt's
        step (saying why it runs) and ends the series with None; `side` prefixes the steps (a fix
        check's two series); `mounts` besides (bisect's shared test-tool cache); `keep` whether they may be
        kept (None: as --keep says). Go's build cache is shared besides (toolcache.GoCache; `fill_go` False:
        filled from this image only when no image filled it yet, a bisect's commit between its ends)."""
        out: list[Attempt] = []
        go = self.images.go_cache.shared(plan, image.ref, every_image=fill_go)
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
                mounts: tuple[Mount, ...] = (), keep: bool | None = None, fill_go: bool = True) -> Attempt:
        """One attempt in a fresh container, in the plan's whole hermetic world."""
        return self.attempts(plan, image, expected, 1, label_steps=False, mounts=mounts, keep=keep,
                             fill_go=fill_go)[0][0]

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
