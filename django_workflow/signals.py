"""Signals a project can listen to, and one the package uses internally."""

from django.dispatch import Signal

#: Sent after the transaction that changed a record's step commits, with the
#: instance already in its new step. Arguments: ``sender`` (the model),
#: ``instance``, ``from_state``, ``to_state``, ``transition`` (name, or ``None``
#: on creation), ``trigger`` (a ``TransitionLog.Trigger``) and ``actor``.
step_changed = Signal()

#: Sent after a unit of work fired for some records: ``sender`` (the model),
#: ``work`` (its name) and ``count``.
work_fired = Signal()

#: Sent when an attempt failed and will be retried: ``sender``, ``pk``, ``work``,
#: ``attempt``, ``error`` and ``retry_at``.
work_failed = Signal()

#: Sent when the last attempt failed and the work stops for this round:
#: ``sender``, ``pk``, ``work``, ``attempt`` and ``error``.
work_halted = Signal()

#: Internal: sent after commit when a record entered a step that runs work
#: (``sender``, ``pk``, ``step``), so the transport can queue it.
entered_step = Signal()
