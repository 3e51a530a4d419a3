"""The reports package: every writer of what replay shows or files. The run report's text
(text.py) and JSON (runjson.py), every table (layout.View), JUnit (junit.py), the farm's HTML
(html.py) and text and JSON views (farm_view.py), the PR comment (comment.py), the CI job's
Markdown summary (summary.py), and the one template environment (templates.py). The report
model is runner.outcome.runreport's, re-exported here. Names load when first
used: the farm's report needs neither the run report's text nor its JSON."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..resources import exports

_WHERE = {**{n: ".runjson" for n in ("SCHEMA", "from_json", "to_json")}, "show": ".text",
          **{n: "..outcome.runreport" for n in ("Baseline", "CapsuleRef", "ImageInfo", "ReplayReport", "Step",
                                            "Verification", "verification_of")}}
__all__ = ["SCHEMA", "Baseline", "CapsuleRef", "ImageInfo", "ReplayReport", "Step", "Verification", "from_json", "show",
           "to_json", "verification_of"]

if TYPE_CHECKING:
    from ..outcome.runreport import Baseline, CapsuleRef, ImageInfo, ReplayReport, Step, Verification, verification_of
    from .runjson import SCHEMA, from_json, to_json
    from .text import show

__getattr__ = exports(__name__, _WHERE)
