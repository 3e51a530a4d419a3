"""Passes only when neither LANG nor FROM_IMAGE is in the environment."""
import os
import sys

present = [name for name in ("LANG", "FROM_IMAGE") if name in os.environ]
print(f"present: {','.join(present) or 'none'}")
sys.exit(1 if present else 0)
