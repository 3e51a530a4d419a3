import os
import sys

cache = os.path.join(os.environ["HOME"], ".cache", "app")
try:
    os.makedirs(cache, exist_ok=True)
except OSError as exc:
    print(f"FAIL: cannot create the cache {cache}: {exc.strerror}")
    sys.exit(1)
print(f"ok: cache at {cache}")
