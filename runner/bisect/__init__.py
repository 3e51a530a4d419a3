"""`replay bisect`: which recorded fact, commit or version makes the difference.

facts.py   the fact kinds (environment facts as data that apply themselves)
search.py  ddmin over sets of fact keys            env.py      the fact mode
walk.py    the linear walk over a line of items    commits.py  --commits   sweep.py  --sweep
trial.py   one trial record and one trial runner for every mode
"""
from .commits import CommitsResult, bisect_commits, commits_data
from .env import bisect_capsules
from .search import BisectResult, Candidate, NotVaried, result_data, search
from .sweep import Registry, SweepResult, bisect_sweep, summary, sweep_data
from .trial import BisectSettings, Observation, Trial, totals
from .walk import Walk

__all__ = ["BisectResult", "BisectSettings", "Candidate", "CommitsResult", "NotVaried", "Observation", "Registry",
           "SweepResult", "Trial", "Walk", "bisect_capsules", "bisect_commits", "bisect_sweep", "commits_data",
           "result_data", "search", "summary", "sweep_data", "totals"]
