"""`replay CAPSULE --debugger`, the use case: one attempt, waiting for a debugger (debugger.py)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..build.sources.baseimage import sidecar_base_ref
from ..build.render import pip_trusted_host
from ..secretrules import mask_url
from ..engine import LABEL
from ..verdict.judge import Attempt
from . import debugger as dbg
from . import image as images
from .options import ReplayOptions
from .progress import Progress
from .replayer import Replayer


@dataclass(frozen=True)
class Debugged:
    runtime: str
    port: int
    attempt: Attempt
    note: str = ""

    @property
    def exit_code(self) -> int:
        """0: the run ended as recorded; 1: otherwise (as `replay CAPSULE`)."""
        return 0 if self.attempt.classification == "recorded" else 1


def debug_capsule(given: Path | str, options: ReplayOptions, progress: Progress, port: int | None,
                  say: Callable[[str], None]) -> Debugged:
    """Plan, build, then run the command once under its debugger; `say` gets the attach text."""
    replayer = Replayer(options, progress)
    try:
        with progress.step("verify capsule"):
            opened = replayer.open(given)
        with progress.step("plan"), opened.naming():
            capsule, plan = replayer.plan(opened.capsule)
        runtime_probe = dbg.debugged(plan.argv, 0)  # a command with no debugger here stops before any build
        port = dbg.port_of(runtime_probe.runtime, port)
        inside = dbg.DEFAULT_PORTS[runtime_probe.runtime]
        image = replayer.image(plan)
        debugging = dbg.debugged(replayer.run_spec(plan, image).argv, inside)
        with progress.step(f"add the {debugging.runtime} debugger (an image of its own)"):
            ref = _debug_image(replayer, image.ref, debugging.runtime)
        expected = replayer.expected(capsule)
        with replayer.entered(plan, label_steps=False) as world:
            settings = world.attempt()
            network = settings.network or _own_network(replayer)
            spec = dbg.debuggee_spec(replayer.run_spec(plan, image, settings), debugging, ref, network)
            fwd = dbg.forwarder_spec(sidecar_base_ref(replayer.engine, replayer.settings, plan.base, progress.say),
                                     network, _forward_network(replayer), inside, port, ((LABEL, replayer.label),))
            forwarder = replayer.engine.start(fwd)
            try:
                say(dbg.attach_text(debugging.runtime, port))
                if debugging.note:
                    say(f"note: {debugging.note}")
                with progress.step("run under the debugger (until the command ends)"):
                    attempt = replayer.run_one(expected, spec)
            finally:  # off the world's network before the world removes it
                replayer.engine.stop(forwarder)
        return Debugged(debugging.runtime, port, attempt, debugging.note)
    finally:
        replayer.close()


def _debug_image(replayer: Replayer, image: str, runtime: dbg.DebugRuntime) -> str:
    settings = replayer.settings

    def build(ctx: Path, tag: str) -> None:
        images.build(replayer.engine, ctx, tag, {LABEL: "image", "replay.debugger": runtime}, replayer.progress.say,
                     replayer.options.verbose, settings.build_timeout_s)

    return dbg.with_debugger(build, replayer.engine.image_exists, image, runtime, lambda: dbg.derived_dockerfile(
        image, runtime, mask_url(settings.pypi_index), pip_trusted_host(settings.pypi_index)))


def _forward_network(replayer: Replayer) -> str:
    """The forwarder's bridge: not internal (a port can be published from it), isolated (no other
    container on it reaches the forwarder); cleanup removes it with the label."""
    name = f"replay-dbgout-{replayer.label}"
    replayer.engine.create_network(name, {LABEL: replayer.label}, internal=False, isolated=True)
    return name


def _own_network(replayer: Replayer) -> str:
    """An internal network of this replay's own (cleanup removes it with the label)."""
    name = f"replay-dbg-{replayer.label}"
    replayer.engine.create_network(name, {LABEL: replayer.label}, internal=True)
    return name
