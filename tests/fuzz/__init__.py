"""Fuzzing the readers and everything after them with mutated capsules (issue 9)."""
