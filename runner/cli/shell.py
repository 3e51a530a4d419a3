"""`replay shell CAPSULE`: an interactive shell in the replayed environment."""
from __future__ import annotations

from ..commands.spec import Args
from ..replay import Progress, ReplayOptions
from ..replay.shell import open_shell
from ..replay import inputs as o
from .console import err


def shell(a: Args) -> int:
    trust = o.trust(a.values)
    plan_opts = o.plan_options(a.values)
    options = ReplayOptions(plan=plan_opts, secret_env=plan_opts.env_overrides, trust=trust)
    return open_shell(a.capsule, options, Progress(err, quiet=a.quiet),
                      lambda line: err.print(f"replay: {line}", markup=False))
