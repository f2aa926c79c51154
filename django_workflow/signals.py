"""Signals a project can listen to."""

from django.dispatch import Signal

#: Sent after the transaction that changed a record's step commits.
#: Arguments: ``sender`` (the model), ``instance``, ``from_state``, ``to_state``,
#: ``transition`` (name, or ``None`` on creation), ``trigger`` (``"initial"``,
#: ``"manual"``, ``"automatic"``, ``"error_path"``, ...) and ``actor``.
step_changed = Signal()
