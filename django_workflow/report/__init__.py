"""Time in step: how long records stayed in each step, read from the transition log.

For one workflow model and a window ``[since, until)``: per step, the stays that
began in the window, their median and 90th percentile in calendar hours and in
business hours, and per timeout of the step the share of those stays in which it
fired. Everything is computed by one SQL statement, on SQLite and PostgreSQL
alike: no log row is loaded into Python.

A stay is one row: the log row that ended it names the step and when the record
had entered it (``from_state_entered_at``); a stay not ended yet is the record's
current step, read from the record. Percentiles are PostgreSQL's
``percentile_cont``, or the same figures from row numbers on SQLite.

The report sees the log as it stood at ``until``: a stay still open then (or left
later) counts up to ``until``, and a timeout that fired later did not fire. A
deleted record's ended stays still count; its open one went with it.

Business hours are the hours of the stay that fell on working days of the
record's calendar, in the record's time zone (24 per working day), the days a
business-day deadline counts. The few non-working days of the window are worked
out here, per zone, as a small table of UTC days the statement joins on.

Per SLA of the model (``Workflow.slas``), ``slas`` adds the clocks that stopped at a
terminal step in the window (met, breached, their median consumption) and the open
ones now (running, paused).

The rooms: ``figures`` (what the report gives), ``reading`` (making it), ``slas``,
``working_days`` (zones and non-working days), ``stays`` (the stays as querysets),
``statement`` (the one SQL statement); the ``workflow_report`` command renders it.
"""

from .figures import Report, ReportError, StepFigures, TimeoutFigures
from .slas import SlaFigures
from .time_in_step import time_in_step
from .working_days import non_working_spans

__all__ = [
    "Report",
    "ReportError",
    "SlaFigures",
    "StepFigures",
    "TimeoutFigures",
    "non_working_spans",
    "time_in_step",
]
