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
import shlex
import threading
from collections.abc import Callable, Collection, Sequence

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
# Read by the image's own POSIX sh (every base has one; perl, the earlier reader, is not on Alpine's):
# the file is `export NAME='VALUE'` lines, each value quoted by shlex.quote (single quotes, nothing
# expanded), then removed, then argv exec'd as it is ("$@": no word of it goes through the shell);
# 127 as a shell says a command it cannot run. $0 is only the shell's own name.
_SET_AND_EXEC = f". {SECRETS_FILE} || exit 127; rm -f {SECRETS_FILE}; %sexec \"$@\""
# what sh itself puts into the environment it execs with, unset unless the run has them (dash: PWD;
# busybox ash: PWD, SHLVL, PATH; bash as sh: OLDPWD; bash sets SHLVL=0 again at exec, whatever is done)
_SHELLS_OWN = ("PWD", "OLDPWD", "SHLVL", "PATH")


def secrets_at_run_time(spec: RunSpec, names: Sequence[str], image_env: Collection[str] = ()) -> RunSpec:
    """A keepable attempt's spec with its --env values out of the container's config: handed over
    as a file through the engine, read into the environment and removed before the command runs
    (engine/kept.py's seal keeps them out of its image and logs). Names are identifiers (the
    option's checker): each line is a plain assignment. `image_env`: the names the image sets."""
    secret = [(k, v) for k, v in spec.env if k in names]
    if not secret:
        return spec
    data = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in secret).encode()
    env = tuple((k, v) for k, v in spec.env if k not in names)
    unset = [n for n in _SHELLS_OWN if n not in {*image_env, *(k for k, _ in spec.env)}]
    script = _SET_AND_EXEC % (f"unset {' '.join(unset)}; " if unset else "")
    return dataclasses.replace(spec, env=env, argv=("sh", "-c", script, "replay-env", *spec.argv),
                               files=(*spec.files, ContainerFile(SECRETS_FILE, data, 0o400)))


class Keeper:
    """Offered each attempt's stopped container in turn (from parallel trials too); keeps one.
    `secrets`: the --env names, kept out of the sealed container; `ref`: its image's tag; `say`: the
    one line when the kept one cannot be sealed safely."""

    def __init__(self, engine: Callable[[], Engine], secrets: Sequence[str] = (), ref: str = "replay/kept:x",
                 say: Callable[[str], None] = lambda _: None) -> None:
        self._engine = engine
        self._secrets, self._ref, self._say = tuple(secrets), ref, say
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
                if self._secrets and self._holds_secrets(self._container):
                    self._container = None  # not spared: the replay's cleanup removes it (a later `replay gc` if not)
                    return None
                try:
                    self._container = self._engine().seal(self._container, self._ref, {KEPT_LABEL: SEALED},
                                                          self._secrets)
                except ReplayError:  # an engine gone: the attempt's own container is what stays (gc's)
                    pass
            return self._container

    def _holds_secrets(self, container: str) -> bool:
        """Whether SECRETS_FILE is still in the container (the wrapper never read it: killed first,
        or its open failed). Then it is not kept: sealing commits it to an image, and so would
        `replay shell --kept`; nothing was run in it worth entering."""
        try:
            self._engine().get_file(container, SECRETS_FILE)
        except FileNotFoundError:
            return False
        except ReplayError:
            pass  # cannot tell: as if it were there
        self._say(f"--keep: the attempt's container {container[:SHORT]} still holds the --env values (its command "
                  "never read them): not kept, removed with the replay's containers (or by `replay gc`)")
        return True

    @property
    def kept(self) -> Kept | None:
        container = self.container
        return Kept(container[:SHORT], enter_command(container)) if container else None
