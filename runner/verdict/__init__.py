"""Judging a run: the failure signature, the verdict vocabulary and its one table of facts, and
the judgements (an attempt against the recording, a set of attempts, a fix against its baseline)."""
