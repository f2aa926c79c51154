"""``MetricsView``, the Prometheus exposition (docs/traces-and-metrics.md#metrics), at the
path the documentation gives; it lives with the other web surfaces in ``web.prometheus``."""

from .web.prometheus import MetricsView

__all__ = ["MetricsView"]
