"""What many tests share: the repository's root, a record read again from the database,
and instants in the zone most tests' business hours keep."""

from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
ZAGREB = ZoneInfo("Europe/Zagreb")


def fresh(record: Any) -> Any:
    """``record`` as its row stands now, read again through its model's manager."""
    return type(record).objects.get(pk=record.pk)


def local(*args: int, zone: ZoneInfo = ZAGREB) -> datetime:
    """``datetime(*args)`` in ``zone`` (Zagreb unless told)."""
    return datetime(*args, tzinfo=zone)
