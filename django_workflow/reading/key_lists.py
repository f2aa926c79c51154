"""A column among a list of values bound as one parameter where the database allows.

``pk__in=keys`` binds one placeholder per key: with a few hundred keys the client spent
more time writing and splitting the statement than PostgreSQL took to run it. On
PostgreSQL ``among`` sends ``column = ANY(%s)`` with the keys as one array; elsewhere it
is Django's ``IN``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import F, Lookup, Q
from django.db.models.lookups import In


class Among(Lookup):
    """``lhs IN rhs``, the values prepared by the column's field, one array on PostgreSQL."""

    lookup_name = "among"
    prepare_rhs = False

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        if connection.vendor != "postgresql" or not self.rhs:
            return compiler.compile(In(self.lhs, self.rhs))
        lhs, lhs_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        values = [field.get_db_prep_value(value, connection) for value in self.rhs]
        return f"{lhs} = ANY(%s)", [*lhs_params, values]


def among(name: str, values: Iterable[Any]) -> Q:
    """The rows whose field ``name`` holds one of ``values``."""
    return Q(Among(F(name), list(values)))
