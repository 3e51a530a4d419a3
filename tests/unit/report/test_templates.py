"""One jinja2 environment for every generated text but a Dockerfile: markup escaped by the
template's kind, Markdown not, an undefined name an error; the Dockerfile renderer reads the
same loader."""
from __future__ import annotations

import jinja2
import pytest

from runner.build import render
from runner.report import comment, html, summary, templates
from runner.report.templates import add_filters, autoescape, environment


def test_every_writer_shares_the_one_environment() -> None:
    env = environment()
    assert {"strip", "vclass", "md_code", "md_cell", "md_block", "md_text", "html_plain", "cell",
            "sentence"} <= env.filters.keys()
    assert html.environment is environment and comment.render is summary.render is templates.render
    assert env.undefined is jinja2.StrictUndefined
    assert render._environment().loader is env.loader  # one loader of templates/


def test_autoescape_follows_the_kind_of_template() -> None:
    assert autoescape("farm/summary.html.j2") and autoescape("x.xml.j2") and autoescape(None)
    assert not autoescape("ci/comment.md.j2") and not autoescape("ci/summary.md.j2")
    env = environment()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()


def test_a_filter_name_is_taken_once() -> None:
    add_filters(cell=summary.cell)  # the same function again: fine
    with pytest.raises(ValueError, match="'cell' is defined twice"):
        add_filters(cell=str)
