"""Fails every other run, whatever the settings: the coin is the kernel's randomness."""
import os
import sys

if os.urandom(1)[0] % 2:
    sys.exit("tails: the coin came up against us")
print("heads")
