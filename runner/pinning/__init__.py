"""`replay pin`: the settings under which a flaky failure fails every time (axes.py what is tried,
pinsearch.py the runs, pinrun.py the use case and the pinned capsule)."""
