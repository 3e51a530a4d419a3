"""`replay render CAPSULE [-o DIR]`: the Dockerfile and build context, without building."""
from __future__ import annotations

from ..commands.answers import RenderedAnswer
from ..commands.arguments import RenderArgs
from ..replay import inputs as o
from ..replay.byhand import render_capsule


def render(a: RenderArgs) -> RenderedAnswer:
    trust = o.trust(a.values)
    return RenderedAnswer(render_capsule(a.capsule, o.plan_options(a.values), trust, a.output, a.builder))
