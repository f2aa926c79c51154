"""What every process running workflows shares, below the engine and the worker: its
OpenTelemetry spans (``traces``) and Prometheus counters (``meters``), its turns on
SQLite's one write lock (``pacing``), and whether it was told to stop (``stopping``).
Imports nothing of the workflow, so ``check`` and the admin may load it without the engine.
"""
