"""The replay report: the model, its text view, its JSON codec."""
from .codec import SCHEMA, from_json, to_json
from .model import CapsuleRef, ImageInfo, ReplayReport, Step, Verification, verification_of
from .text import show

__all__ = ["SCHEMA", "CapsuleRef", "ImageInfo", "ReplayReport", "Step", "Verification", "from_json", "show",
           "to_json", "verification_of"]
