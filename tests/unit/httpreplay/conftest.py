"""The replay server's modules live in images/httpreplay (they run in the sidecar):
put that folder on sys.path so the tests import them as the server does."""
from __future__ import annotations

import sys

from runner.resources import images_dir

_SERVER_DIR = str(images_dir() / "httpreplay")
if _SERVER_DIR not in sys.path:
    sys.path.insert(0, _SERVER_DIR)
