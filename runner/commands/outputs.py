"""What a command answers: one typed result per command, which carries its exit code, its --json
result and its text view; the one renderer (runner/cli/console.py `emit`) writes one or the other.

A command's declaration names its result type (`Command.result`, "module:Class" under
runner.commands); the result type says its own JSON Schema, so the shipped schema files come from
the declarations with no table of command names:

    python -m runner.commands.outputs     # after changing a result's shape: rewrites runner/schemas/*.json
"""
from __future__ import annotations

import importlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ReplayError
from ..schemas.derive import Derive, document, envelope
from .catalog import COMMANDS
from .spec import Command

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@dataclass(frozen=True)
class Screen:
    """Where and how much a text view shows: stdout, stderr (progress, closing lines), every table
    (-v / --all) or the short view, and --quiet."""

    out: Any
    err: Any
    full: bool = False
    quiet: bool = False


class Answer(ABC):
    """A command's typed result. Subclasses are frozen dataclasses holding what the stage returned."""

    about: ClassVar[str] = ""  # said after "replay NAME --json result" in the schema's title

    @property
    @abstractmethod
    def exit_code(self) -> int:
        """The command's exit rule, applied to this result."""

    @abstractmethod
    def data(self) -> Any:
        """The --json result (the envelope's `result`)."""

    @abstractmethod
    def show(self, screen: Screen) -> None:
        """The text view."""

    def problem(self) -> ReplayError | None:
        """An error to end with after the text view (with --json: instead of the result)."""
        return None

    @classmethod
    @abstractmethod
    def schema(cls, d: Derive) -> dict[str, Any]:
        """The JSON Schema of data() (its $defs go to `d`)."""


def result_type(cmd: Command) -> type[Answer]:
    """The result type a declaration names."""
    assert cmd.result is not None, cmd.name
    module, _, name = cmd.result.partition(":")
    found: type[Answer] = getattr(importlib.import_module(f"runner.commands.{module}"), name)
    return found


def documents() -> dict[str, dict[str, Any]]:
    """File name -> schema: the envelope and the result of every command that declares one."""
    docs = {"envelope": envelope()}
    for cmd in COMMANDS:
        if cmd.result is not None:
            cls, d = result_type(cmd), Derive()
            body = cls.schema(d)
            docs[cmd.schema_name] = document(cmd.schema_name, f"replay {cmd.name} --json result{cls.about}", body,
                                             d.defs)
    return {f"{name}.schema.json": doc for name, doc in docs.items()}


def text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    for name, doc in documents().items():
        (SCHEMAS / name).write_text(text(doc), encoding="utf-8")
        print(f"wrote {SCHEMAS / name}")


if __name__ == "__main__":
    main()
