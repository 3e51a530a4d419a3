"""Where the test capsules are, and one way to make a variant of one."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "tests" / "fixtures" / "examples"
TWIN = EXAMPLES / "twin" / "echarts-new-york.json"
CI = EXAMPLES / "codeinstances" / "fetch-greeting.json"
# a valid CodeInstances file with what the example lacks: a signal, base64 bodies, an error call, a random value
CI_RICH = ROOT / "tests" / "cases" / "codeinstances" / "errors-and-binary" / "capsule.json"
NOVA = EXAMPLES / "novafabric" / "01JC4Q7W9Z2M5N8P3R6T1V0X4B"
MINIMAL = EXAMPLES / "novafabric" / "minimal-run"
TZ_CAPSULE = ROOT / "examples" / "tz-clock" / "capsule.json"
BUNDLE = ROOT / "examples" / "tz-clock" / "repo.bundle"


def json_variant(source: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of a JSON capsule with one change, as variant.json in tmp_path."""
    data = json.loads(source.read_text())
    change(data)
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(data))
    return path
