"""The run side: the replayer, the world an attempt runs in, and `replay CAPSULE` itself.

Its names load when first used (PEP 562): a command that only needs the run defaults
(`replay.defaults`) or a report does not pay for loading the builder and the engine.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..resources import exports

_WHERE = {
    "Attempt": "..verdict.judge", "Classification": "..verdict.judge", "Expected": "..verdict.judge",
    "Verdict": "..verdict.judge", "classify": "..verdict.judge", "expected_of": "..verdict.judge",
    "judge": "..verdict.judge", "Drift": "..build.plan", "BuiltImage": ".image", "drift_of": ".image",
    "replay_capsule": ".job", "ReplayOptions": ".options", "Progress": ".progress", "Replayer": ".replayer",
}
__all__ = ["Attempt", "BuiltImage", "Classification", "Drift", "Expected", "Progress", "ReplayOptions", "Replayer",
           "Verdict", "classify", "drift_of", "expected_of", "judge", "replay_capsule"]

if TYPE_CHECKING:
    from ..build.plan import Drift
    from ..verdict.judge import Attempt, Classification, Expected, Verdict, classify, expected_of, judge
    from .image import BuiltImage, drift_of
    from .job import replay_capsule
    from .options import ReplayOptions
    from .progress import Progress
    from .replayer import Replayer


__getattr__ = exports(__name__, _WHERE)
