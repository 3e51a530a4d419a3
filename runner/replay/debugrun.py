"""`replay CAPSULE --debugger`, the use case: one attempt, waiting for a debugger (debugger.py),
reached through replay's own port (debugport.py)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..build.render import pip_trusted_host
from ..secretrules import mask_url
from ..engine import LABEL, Engine
from ..verdict.judge import Attempt, expected_of
from . import debugger as dbg
from . import image as images
from .debugport import POLL_S, DebugPort, debugger_listens, relay_argv, require_relay, thread
from .options import ReplayOptions
from .progress import Progress
from ..verdict.attempted import attempt_of
from .loading import Loader
from .replayer import Replayer


@dataclass(frozen=True)
class Debugged:
    runtime: str
    port: int
    attempt: Attempt  # as judged: under Delve, with the test binary's own verdict as its exit code
    note: str = ""
    debugger_exit: int | None = None  # the debugger's own exit code (Delve's: 0 whatever the tests said)

    @property
    def exit_code(self) -> int:
        """0: the run ended as recorded; 1: otherwise (as `replay CAPSULE`)."""
        return 0 if self.attempt.classification == "recorded" else 1


def debug_capsule(given: Path | str, options: ReplayOptions, progress: Progress, port: int | None,
                  say: Callable[[str], None], engine: Engine | None = None) -> Debugged:
    """Plan, build, then run the command once under its debugger; `say` gets the attach text once
    the debugger listens. `engine`: the one to use (the configured one when None)."""
    replayer = Replayer(options, progress, engine=engine)
    loader = Loader(options, replayer.settings)
    listener: DebugPort | None = None
    try:
        with progress.step("verify capsule"):
            opened = loader.open(given)
        with progress.step("plan"), opened.naming():
            capsule, plan = loader.plan(opened.capsule)
        runtime = dbg.debugged(plan.argv, 0).runtime  # a command with no debugger here stops before any build
        port, inside = dbg.port_of(runtime, port), dbg.DEFAULT_PORTS[runtime]
        name = f"replay-debuggee-{replayer.label}"
        # listening from now on (a port that is taken is said before the build); clients wait until ready
        listener = DebugPort(port, lambda: replayer.engine.channel(name, relay_argv(inside)))
        port = listener.port  # the one the system chose, for --debugger-port 0
        image = replayer.image(plan)
        debugging = dbg.debugged(replayer.run_spec(plan, image).argv, inside)
        go = next((r.version for r in plan.runtimes if r.name == "go"), None)
        delve, mismatch = dbg.delve_for(plan.base.suite, go) if debugging.runtime == "go" else (None, "")
        if mismatch:
            say(f"note: {mismatch}")
        with progress.step(f"add the {debugging.runtime} debugger (an image of its own)"):
            ref = _debug_image(replayer, image.ref, debugging.runtime, delve, plan.base.suite)
        require_relay(replayer.engine, ref, replayer.label)
        expected = expected_of(capsule)
        with replayer.entered(plan, label_steps=False) as world:
            spec = dbg.debuggee_spec(replayer.run_spec(plan, image, world.attempt()), debugging, ref, name)
            ended = threading.Event()

            def announce() -> None:
                say(dbg.attach_text(debugging.runtime, port))
                if debugging.note:
                    say(f"note: {debugging.note}")
            thread(_announce, replayer, name, inside, ended, listener, announce, name="debugger-ready")
            try:
                with progress.step("run under the debugger (until the command ends)"):
                    attempt = replayer.run_one(expected, spec)
            finally:
                ended.set()
        debugger_exit = attempt.exit_code
        if debugging.runtime == "go":  # Delve exits 0 whatever the tests said: judged on the binary's own verdict
            own = dbg.go_test_verdict(attempt.output_tail)
            if own is not None and own != attempt.exit_code:
                output = dbg.as_go_test(attempt.output_tail, own, expected.key_lines).encode()
                attempt = attempt_of(output, output, own, None, attempt.duration_s, attempt.timed_out, expected)
        return Debugged(debugging.runtime, port, attempt, "; ".join(n for n in (debugging.note, mismatch) if n),
                        debugger_exit)
    finally:
        if listener is not None:
            listener.close()
        replayer.close()


def _announce(replayer: Replayer, container: str, inside: int, ended: threading.Event, listener: DebugPort,
              announce: Callable[[], None]) -> None:
    """Once the debugger listens in the container: waiting clients relayed, then the attach text
    said (a client that connects as soon as it reads it gets its answer)."""
    while not ended.is_set():
        if debugger_listens(replayer.engine, container, inside):
            listener.ready()
            announce()
            return
        ended.wait(POLL_S)


def _debug_image(replayer: Replayer, image: str, runtime: dbg.DebugRuntime, delve: dbg.Delve | None,
                 suite: str) -> str:
    settings = replayer.settings

    def build(ctx: Path, tag: str) -> None:
        images.build(replayer.engine, ctx, tag, {LABEL: "image", "replay.debugger": runtime}, replayer.progress.say,
                     replayer.options.verbose, settings.build_timeout_s)

    return dbg.with_debugger(build, replayer.engine.image_exists, image, runtime, lambda: dbg.derived_dockerfile(
        image, runtime, mask_url(settings.pypi_index), pip_trusted_host(settings.pypi_index), delve,
        suite), delve)
