"""`replay render CAPSULE [-o DIR]`: the Dockerfile and build context, without building."""
from __future__ import annotations

from ..commands.spec import Args
from ..replay.byhand import render_capsule
from ..report.render import show_rendered
from ..replay import inputs as o
from .console import err, out, print_result


def render(a: Args) -> int:
    trust = o.trust(a.values)
    rendered = render_capsule(a.capsule, o.plan_options(a.values), trust, a.output, a.builder)
    if a.json:
        print_result("render", 0, rendered.json())
    else:
        show_rendered(rendered, out, err)
    return 0
