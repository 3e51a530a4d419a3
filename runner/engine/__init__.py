"""The engine seam: a protocol, its docker implementation, and a lazy holder."""
from .steps import BuildEvent
from .docker import DockerEngine
from .holder import EngineHolder
from .protocol import KEPT, KEPT_LABEL, LABEL, Channel, OWNER_LABEL, PLAN_LABEL, USER_LABEL, Containment, ContainerFile, Engine, Mount, RunResult, RunSpec, current_user
from .sdk import TransientEngineError

__all__ = ["BuildEvent", "Channel", "Containment", "ContainerFile", "DockerEngine", "Engine", "EngineHolder", "KEPT", "KEPT_LABEL", "LABEL",
           "Mount", "OWNER_LABEL", "PLAN_LABEL", "RunResult", "RunSpec", "TransientEngineError",
           "USER_LABEL", "current_user"]
