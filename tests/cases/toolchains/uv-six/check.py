"""Prints the installed six and where it lives: the lockfile put it there."""
import six

print("six", six.__version__)
