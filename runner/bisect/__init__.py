"""`replay bisect`: which recorded fact, commit or version makes the difference.

variation.py the fact kinds (environment facts as data that apply themselves)
search.py    ddmin over sets of fact keys, confirmed   env.py      the fact mode
splits.py    where ddmin cuts, cost-aware              set_evidence.py what each set's runs say
walk.py      probabilistic bisection along a line      commits.py  --commits   version_sweep.py --sweep
posterior.py the belief over a line's first bad item   rules.py    confidence and budgets
trial.py     one trial record and one trial runner for every mode
"""
from .commits import CommitsResult, bisect_commits, commits_data, git_history
from .env import bisect_capsules
from .rules import Rules
from .search import BisectResult, Candidate, NotVaried, Removal, result_data, search
from .version_sweep import Registry, SweepResult, bisect_sweep, summary, sweep_data
from .trial import BisectSettings, Observation, Trial, cores, totals
from .walk import Chance, Walk, candidates_said, chance_said, chances_said

__all__ = ["cores", "git_history", "BisectResult", "BisectSettings", "Candidate", "Chance", "CommitsResult", "NotVaried", "Observation",
           "Registry", "Removal", "Rules", "SweepResult", "Trial", "Walk", "bisect_capsules", "bisect_commits",
           "bisect_sweep", "candidates_said", "chance_said", "chances_said", "commits_data", "result_data", "search", "summary", "sweep_data", "totals"]
