"""The replay report: the model, its text view, its JSON codec."""
from .codec import SCHEMA, from_json, to_json
from .model import Baseline, CapsuleRef, ImageInfo, ReplayReport, Step, Verification, verification_of
from .text import show

__all__ = ["SCHEMA", "Baseline", "CapsuleRef", "ImageInfo", "ReplayReport", "Step", "Verification", "from_json", "show",
           "to_json", "verification_of"]
