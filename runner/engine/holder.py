"""Connect lazily, so commands that need no engine never touch one."""
from __future__ import annotations

from .protocol import Engine


class EngineHolder:
    def __init__(self, builder: str = "auto", engine: Engine | None = None) -> None:
        self.builder = builder
        self._engine = engine

    def get(self) -> Engine:
        if self._engine is None:
            from .docker import DockerEngine

            self._engine = DockerEngine(self.builder)
        return self._engine

    def cleanup(self, label: str, spare: tuple[str, ...] = ()) -> None:
        """Remove what carries the label (but the kept containers `spare` names), when an engine was ever reached."""
        if self._engine is not None:
            if spare:
                self._engine.cleanup(label, spare)
            else:
                self._engine.cleanup(label)
