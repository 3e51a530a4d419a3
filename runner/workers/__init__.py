"""The farm past one machine: `replay worker` (a Celery worker on a Docker host) and the
coordinator's side of it (`farm run --executor celery`).

app.py     the Celery app: delivery settings, the task, the workers' heartbeat
message.py the unit of work and its answer as JSON (the portable plan, its content)
task.py    what a worker does with one: build the image it lacks, run the attempts
dispatch.py the coordinator: send, hold a lease per task, re-send a vanished worker's task
taskkeys.py the Redis keys both sides share (leases, answers, what was sent)
"""
