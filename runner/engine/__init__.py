"""The engine seam: a protocol, its docker implementation, and a lazy holder."""
from .steps import BuildEvent
from .docker import DockerEngine
from .holder import EngineHolder
from .protocol import LABEL, OWNER_LABEL, Containment, ContainerFile, Engine, Mount, RunResult, RunSpec
from .sdk import TransientEngineError

__all__ = ["BuildEvent", "Containment", "ContainerFile", "DockerEngine", "Engine", "EngineHolder", "LABEL", "Mount",
           "OWNER_LABEL", "RunResult", "RunSpec", "TransientEngineError"]
