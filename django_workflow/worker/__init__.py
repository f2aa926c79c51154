"""What ``manage.py workflow_worker`` runs: the transport that carries queued work, the
schedulers that decide when work runs, the supervisor of their processes, recovery of
work a dead worker left, and the signals and pacing of those processes.
"""
