"""The engine seam: a protocol, its docker implementation, and a lazy holder."""
from .steps import BuildEvent
from .docker import DockerEngine
from .holder import EngineHolder
from .protocol import KEPT, KEPT_LABEL, LABEL, Channel, OWNER_LABEL, PLAN_LABEL, Containment, ContainerFile, Engine, Mount, RunResult, RunSpec
from .sdk import TransientEngineError

__all__ = ["BuildEvent", "Channel", "Containment", "ContainerFile", "DockerEngine", "Engine", "EngineHolder", "KEPT", "KEPT_LABEL", "LABEL",
           "Mount", "OWNER_LABEL", "PLAN_LABEL", "RunResult", "RunSpec", "TransientEngineError"]
