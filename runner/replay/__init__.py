"""The run side: the replayer, the world an attempt runs in, and `replay CAPSULE` itself."""
from ..verdict.judge import Attempt, Classification, Expected, Verdict, classify, expected_of, judge
from ..build.plan import Drift
from .image import BuiltImage, drift_of
from .job import replay_capsule
from .options import ReplayOptions
from .progress import Progress
from .replayer import Replayer

__all__ = ["Attempt", "BuiltImage", "Classification", "Drift", "Expected", "Progress", "ReplayOptions", "Replayer",
           "Verdict", "classify", "drift_of", "expected_of", "judge", "replay_capsule"]
