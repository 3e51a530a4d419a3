"""What a replay comes to, as values: the report model (runreport.py) the replay stage builds and
runner.report writes, with the parts it carries (a kept container, the causes, a render)."""
