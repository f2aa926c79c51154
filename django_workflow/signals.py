"""Signals a project can listen to, and one the package uses internally.

Each is sent with the model as ``sender`` and is a Django ``ModelSignal``, like
``post_save``: ``connect`` and ``disconnect`` also take the sender as a lazy
``"app_label.ModelName"`` string, resolved when that model is registered, so a
receiver can be connected at import of a models module, before the app
registry is ready.
"""

from django.db.models.signals import ModelSignal

#: Sent after the transaction that changed a record's step commits, with the
#: instance already in its new step. Arguments: ``sender`` (the model),
#: ``instance``, ``from_state``, ``to_state``, ``transition`` (name, or ``None``
#: on creation), ``trigger`` (a ``TransitionLog.Trigger``) and ``actor``.
step_changed = ModelSignal()

#: Sent after a unit of work fired for some records: ``sender`` (the model),
#: ``work`` (its name) and ``count``.
work_fired = ModelSignal()

#: Sent when an attempt failed and will be retried: ``sender``, ``pk``, ``work``,
#: ``attempt``, ``error`` and ``retry_at``.
work_failed = ModelSignal()

#: Sent when the last attempt failed and the work stops for this round:
#: ``sender``, ``pk``, ``work``, ``attempt`` and ``error``.
work_halted = ModelSignal()

#: Internal: sent after commit when a record entered a step that runs work
#: (``sender``, ``pk``, ``step``), so the transport can queue it.
entered_step = ModelSignal()
