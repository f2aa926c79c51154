"""The instant the time-travelling tests start from."""

from datetime import UTC, datetime

T = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)  # a Monday
