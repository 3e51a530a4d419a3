"""`replay shell CAPSULE` (or --kept ID, --last): an interactive shell in the replay's world."""
from __future__ import annotations

from ..commands.arguments import ShellArgs
from ..errors import UsageError
from ..replay import Progress, ReplayOptions
from ..replay.shell import open_shell
from ..replay import inputs as o
from ..textsafe import escaped
from .console import err


def shell(a: ShellArgs) -> int:
    if sum((a.capsule is not None, a.kept is not None, a.last)) != 1:
        raise UsageError("replay shell takes one of CAPSULE, --kept ID or --last")
    trust = o.trust(a.values)
    plan_opts = o.plan_options(a.values)
    options = ReplayOptions(plan=plan_opts, secret_env=plan_opts.env_overrides, trust=trust)
    return open_shell(a.capsule, options, Progress(err, quiet=a.quiet),
                      lambda line: err.print(f"replay: {escaped(line)}", markup=False), kept=a.kept, last=a.last)
