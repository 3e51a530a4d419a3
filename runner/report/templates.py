"""The one jinja2 environment for every text replay generates but a Dockerfile: the farm's
HTML pages, the PR comment, the CI job's Markdown summary.

Templates are files under templates/ (one loader, runner.resources.template_loader, shared
with the Dockerfile renderer). StrictUndefined: a name a template expects and the writer
did not give is an error, never an empty string. Autoescape by the kind of the template,
read from its name: markup (`*.html.j2`, `*.xml.j2`) is escaped, Markdown and plain text
are not: they quote capsule values with textsafe's Markdown filters, which every environment
has (`md_code`, `md_cell` for a table, `md_block`, `md_text` for prose); markup templates put
capsule text in attributes and `<title>` through `html_plain` (controls removed).
Each writer module adds its filters once, under names no other writer uses.
"""
from __future__ import annotations

from collections.abc import Callable
import functools
from functools import cache
from typing import Any

import jinja2

from .. import textsafe
from ..resources import template_loader

MARKUP = (".html", ".htm", ".xml", ".svg")


def autoescape(name: str | None) -> bool:
    """Escape markup templates only; a template from a string (no name) is escaped too."""
    return name is None or name.removesuffix(".j2").endswith(MARKUP)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=template_loader(), undefined=jinja2.StrictUndefined, autoescape=autoescape,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(md_code=textsafe.md_code, md_cell=functools.partial(textsafe.md_code, table=True),
                       md_block=textsafe.md_block, md_text=textsafe.md_text, html_plain=textsafe.html_plain)
    return env


def add_filters(**filters: Callable[..., Any]) -> None:
    """A writer's filters, added to the one environment; a name already taken by another
    function (a built-in filter or another writer's) is a programming error."""
    env = environment()
    for name, fn in filters.items():
        if env.filters.setdefault(name, fn) is not fn:
            raise ValueError(f"template filter {name!r} is defined twice")


def render(name: str, **values: Any) -> str:
    return environment().get_template(name).render(**values)
