"""`--keep`: which attempt's container stays once the replay ends, stopped, its filesystem as the run
left it: the first that ended as recorded, or, when none did, the last. Every attempt of a replay
with --keep is made keepable (labelled KEPT_LABEL, its plan under PLAN_LABEL, its keeper under
USER_LABEL); the others are removed as soon as another takes their place, and `replay gc` removes
the kept one (gc.py).

The kept one is sealed once the attempts are over (engine `seal`): its state moves to a fresh
container that never ran, so neither its config nor its logs hold an `--env` value or the output
before scrubbing; its image (KEPT_LABEL=image) goes with it in `replay gc`.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Sequence

from ..build.plan import Plan
from ..build.plancodec import plan_to_json
from ..errors import ReplayError
from ..engine import KEPT, KEPT_LABEL, PLAN_LABEL, USER_LABEL, ContainerFile, Engine, RunSpec, current_user
from ..verdict.judge import Attempt
from ..outcome.runreport import Kept

SHORT = 12  # the id as shown, and as `replay shell --kept` takes it (any unique prefix of it works)
SEALED = "image"  # KEPT_LABEL's value on a sealed container's image


def enter_command(container: str) -> str:
    return f"replay shell --kept {container[:SHORT]}"


def keep_labels(plan: Plan) -> tuple[tuple[str, str], ...]:
    """A keepable container's labels: the plan it ran, as JSON (validated again when read back),
    without its source: `shell --kept` builds nothing, and a --repo URL may carry a token, a
    --patch or the diff text a secret; labels show in `docker inspect` and `docker ps`."""
    shown = dataclasses.replace(plan, source=None)
    return ((KEPT_LABEL, KEPT), (PLAN_LABEL, json.dumps(plan_to_json(shown), sort_keys=True, separators=(",", ":"))),
            (USER_LABEL, current_user()))


SECRETS_FILE = "/.replay-env"  # the --env values of a keepable attempt: read, then removed, before the command
# NUL-separated NAME=VALUE records into the environment, the file removed, then argv exec'd as it is
# (no shell: argv untouched); 127 as a shell says a command it cannot run
_SET_AND_EXEC = ('my $f = shift; open(my $h, "<", $f) or exit 127; local $/ = "\\0"; '
                 'while (my $r = <$h>) { chomp $r; my ($k, $v) = split /=/, $r, 2; $ENV{$k} = $v } '
                 'close $h; unlink $f; exec { $ARGV[0] } @ARGV or exit 127')


def secrets_at_run_time(spec: RunSpec, names: Sequence[str]) -> RunSpec:
    """A keepable attempt's spec with its --env values out of the container's config: handed over
    as a file through the engine, read into the environment and removed before the command runs
    (engine/kept.py's seal keeps them out of its image and logs)."""
    secret = [(k, v) for k, v in spec.env if k in names]
    if not secret:
        return spec
    data = b"".join(f"{k}={v}".encode() + b"\0" for k, v in secret)
    return dataclasses.replace(spec, env=tuple((k, v) for k, v in spec.env if k not in names),
                               argv=("perl", "-e", _SET_AND_EXEC, SECRETS_FILE, *spec.argv),
                               files=(*spec.files, ContainerFile(SECRETS_FILE, data, 0o400)))


class Keeper:
    """Offered each attempt's stopped container in turn (from parallel trials too); keeps one.
    `secrets`: the --env names, kept out of the sealed container; `ref`: its image's tag."""

    def __init__(self, engine: Callable[[], Engine], secrets: Sequence[str] = (), ref: str = "replay/kept:x") -> None:
        self._engine = engine
        self._secrets, self._ref = tuple(secrets), ref
        self._lock = threading.Lock()
        self._container: str | None = None
        self._final = False  # one that ended as recorded: no later attempt replaces it
        self._sealed = False

    def offer(self, container: str, attempt: Attempt) -> None:
        with self._lock:
            if self._final or self._sealed:
                drop: str | None = container
            else:
                drop, self._container = self._container, container
                self._final = attempt.classification == "recorded"
        if drop is not None:
            self._engine().stop(drop)  # stops and removes it

    @property
    def container(self) -> str | None:
        """The kept container's full id, sealed (once asked, the attempts are over)."""
        with self._lock:
            if self._container is not None and not self._sealed:
                self._sealed = True
                try:
                    self._container = self._engine().seal(self._container, self._ref, {KEPT_LABEL: SEALED},
                                                          self._secrets)
                except ReplayError:  # an engine gone: the attempt's own container is what stays (gc's)
                    pass
            return self._container

    @property
    def kept(self) -> Kept | None:
        container = self.container
        return Kept(container[:SHORT], enter_command(container)) if container else None
