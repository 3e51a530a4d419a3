"""The reports package: every writer of what replay shows or files. The run report's text
(text.py) and JSON (codec.py), every table (layout.View), JUnit (junit.py), the farm's HTML
(html.py) and text and JSON views (farm.py), the PR comment (comment.py), the CI job's
Markdown summary (summary.py), and the one template environment (templates.py). The report
model is the replay stage's (runner.replay.report), re-exported here."""
from .codec import SCHEMA, from_json, to_json
from ..replay.report import Baseline, CapsuleRef, ImageInfo, ReplayReport, Step, Verification, verification_of
from .text import show

__all__ = ["SCHEMA", "Baseline", "CapsuleRef", "ImageInfo", "ReplayReport", "Step", "Verification", "from_json", "show",
           "to_json", "verification_of"]
