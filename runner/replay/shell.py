"""`replay shell`, the use case: bash in the replay's world, under the same containment as an attempt.

The world is an attempt's (world.py): the recorded environment, TZ, locale and clock (libfaketime),
the recorded random values, and for recorded HTTP the hermetic network with its sidecar serving the
calls (what matched nothing is said when the shell ends). The recorded command is printed on entry
and is the one line of the shell's history. The state is the image before the command ran, or with
--kept ID / --last a kept attempt's (--keep), the current user's: its stopped container committed to a
temporary image, removed once the shell ends (and by `replay gc` when the shell was cut short).
"""
from __future__ import annotations

import dataclasses
import json
import re
import shlex
from collections.abc import Callable

from ..build.plan import Plan
from ..build.plancodec import plan_from_json
from ..engine import KEPT, KEPT_LABEL, LABEL, OWNER_LABEL, PLAN_LABEL, USER_LABEL, ContainerFile, Engine, current_user
from ..engine.docker import owner
from ..textsafe import shell_word, shown
from ..errors import CapsuleError, UsageError
from .image import BuiltImage
from .options import ReplayOptions
from .progress import Progress
from .loading import Loader
from .replayer import Replayer

HISTORY = "/tmp/.replay_history"  # HISTFILE: the recorded command, one Up away
_ID = re.compile(r"[0-9a-f]{4,64}")


def open_shell(capsule: str | None, options: ReplayOptions, progress: Progress, say: Callable[[str], None],
               kept: str | None = None, last: bool = False, engine: Engine | None = None) -> int:
    """Bash in the capsule's image (built or reused), or in a kept attempt's state; the shell's exit code."""
    replayer = Replayer(options, progress, engine=engine)
    try:
        if capsule is not None:
            _, plan = Loader(options, replayer.settings).load(capsule)  # refused (exit 1) when it does not verify, unless allowed
            return _bash(replayer, plan, replayer.image(plan), say)
        if not last:
            _checked_id(kept)  # bad input is said before the engine is asked
        container, plan = kept_state(replayer.engine, kept, last)
        ref = f"{replayer.settings.image_repo}:shell-{replayer.label}"
        with progress.step(f"commit the kept container {container[:12]}"):
            # labelled as gc sweeps it (this process its owner): a shell cut short leaves nothing for good
            replayer.engine.commit(container, ref, {LABEL: replayer.label, KEPT_LABEL: "shell", OWNER_LABEL: owner()})
        try:
            return _bash(replayer, plan, BuiltImage(ref, False, 0.0), say)
        finally:
            replayer.engine.remove_image(ref)
    finally:
        replayer.close()


def kept_state(engine: Engine, kept: str | None, last: bool) -> tuple[str, Plan]:
    """The kept container (--kept ID, or the newest with --last) and the plan it ran (from its label)."""
    me = current_user()
    if last:
        found = engine.newest(f"{KEPT_LABEL}={KEPT}", f"{USER_LABEL}={me}")
        if found is None:
            raise UsageError(f"--last: no kept container of {me} on this engine (`replay CAPSULE --keep` keeps one)")
        kept = found
    kept = _checked_id(kept)
    labels = engine.container_labels(kept)
    if labels is None or labels.get(KEPT_LABEL) != KEPT or PLAN_LABEL not in labels:
        raise UsageError(f"--kept {kept}: no container `replay --keep` kept has this id (`replay gc` removes them)")
    if labels.get(USER_LABEL, me) != me:
        raise UsageError(f"--kept {kept}: kept by {shown(labels[USER_LABEL], 40)}, not {me}: a kept container is its "
                         "keeper's")
    try:
        data = json.loads(labels[PLAN_LABEL])
    except ValueError as exc:
        raise CapsuleError(f"container {kept[:12]}", f"its plan label is not JSON ({exc})") from exc
    return kept, plan_from_json(data, f"container {kept[:12]}")


def _checked_id(kept: str | None) -> str:
    if kept is None or not _ID.fullmatch(kept):
        raise UsageError(f"--kept {shown(kept or '')!r}: a container id, as `replay CAPSULE --keep` printed it")
    return kept


def _bash(replayer: Replayer, plan: Plan, image: BuiltImage, say: Callable[[str], None]) -> int:
    with replayer.entered(plan) as world:
        spec = replayer.run_spec(plan, image, world.attempt())
        prefix = spec.argv[:len(spec.argv) - len(plan.argv)]  # env -u NAME...: what the image sets and the run had not
        command = shlex.join(plan.argv)
        spec = dataclasses.replace(
            spec, argv=(*prefix, "bash"), tty=True, stdin_open=True, keep=False,
            env=(*((k, v) for k, v in spec.env if k != "HISTFILE"), ("HISTFILE", HISTORY)),
            files=(*spec.files, ContainerFile(HISTORY, f"{command}\n".encode(), 0o666)))
        say(f"recorded command (the shell's history: Up): {' '.join(shell_word(w) for w in plan.argv)}")
        code = replayer.engine.interactive(spec)
        http = world.http_report()
    for line in http.lines() if http is not None else ():
        say(line)
    return code
