"""Labelled Prometheus series kept once found, so a call's metrics are a dictionary lookup.

``Counter.labels(...)`` checks and joins the label values and takes the metric's lock on every
call; a Route counts up to four series per skill it hands out. ``Children.of`` keeps each
series the first time its labels are seen (prometheus_client hands back that same series for
the same labels, and nothing here removes one), so later calls skip the checks. The series
are bounded as the labels are: methods, codes, reasons, and the index's catalogs and skills.
"""

from __future__ import annotations

from typing import Any

from prometheus_client.metrics import MetricWrapperBase


class Children:
    """Series of labelled metrics by (metric, label values)."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, tuple[str, ...]], Any] = {}

    def of(self, metric: MetricWrapperBase, *values: str) -> Any:
        """``metric.labels(*values)``, looked up once."""
        key = (id(metric), values)
        found = self._found.get(key)
        if found is None:
            found = self._found.setdefault(key, metric.labels(*values))
        return found

    def __len__(self) -> int:
        return len(self._found)
