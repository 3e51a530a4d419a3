"""Fails on six 1.16.0 only: the outcome depends on the pinned version."""
import sys

import six

print(f"six {six.__version__}", flush=True)
if six.__version__ == "1.16.0":
    print("error: six 1.16.0 is not supported: this check needs six >= 1.17", file=sys.stderr, flush=True)
    sys.exit(1)
print("ok: six is recent enough", flush=True)
