"""The one validator: allow-lists for every capsule value that can reach a build line."""
from __future__ import annotations

import pytest

from runner.errors import CapsuleError
from runner.build.validate import check, is_valid, relative_path, run_path, shown

HOSTILE = ["a\nRUN touch /pwned", "$(touch /pwned)", "`id`", "x\\", "a b", "-c", "--upload-pack=touch",
           "a;b", "a|b", "'q'", '"q"', "{{ 7*7 }}", "a\x00b", "a\x1b[2J", "", "é"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("kind", ["version", "npm package", "python package", "locale", "commit", "file name",
                                  "id", "env name"])
def test_hostile_values_never_pass(kind: str, value: str) -> None:
    assert not is_valid(kind, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind, value", [
    ("version", "22.23.3"), ("version", "1.0.0-rc.1+build5"), ("npm package", "@babel/core"),
    ("npm package", "JSONStream"), ("python package", "zope.interface"), ("locale", "en_US.UTF-8"),
    ("locale", "de_DE@euro"), ("commit", "47516d08"), ("id", "01JC4Q7W9Z2M5N8P3R6T1V0X4B"),
    ("env name", "NODE_ENV"), ("time zone", "America/New_York"), ("relative path", "packages/app/package-lock.json"),
    ("relative path", ".config/uv.lock"), ("relative path", "."),
])
def test_real_values_pass(kind: str, value: str) -> None:
    assert is_valid(kind, value)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["../x", "a/../../x", "/etc/passwd", "a\nb", "a\\b", "a b/c", "$x/y", "a//../b"])
def test_relative_paths_stay_inside_and_plain(path: str) -> None:
    with pytest.raises(CapsuleError) as err:
        relative_path(path, "lockfile path", "c.json")
    assert err.value.line().startswith("c.json: lockfile path: ")
    assert "\n" not in err.value.line()


def test_relative_paths_are_normalised() -> None:
    assert relative_path("./a/./b/uv.lock", "lockfile path", "c.json") == "a/b/uv.lock"


def test_run_paths_may_hold_spaces_but_not_control_characters() -> None:
    assert run_path("my project/sub", "command.cwd", "c.json") == "my project/sub"
    for bad in ("a\nb", "../up", "/abs"):
        with pytest.raises(CapsuleError):
            run_path(bad, "command.cwd", "c.json")


def test_refusals_quote_a_cut_escaped_value() -> None:
    with pytest.raises(CapsuleError) as err:
        check("version", "1" * 5000 + "\x1b", "runtime node", "c.json")
    line = err.value.line()
    assert len(line) < 200 and "\x1b" not in line and "is not a valid version (it holds a control character)" in line
    assert shown("a\x1bb") == "'a\\x1bb'"
