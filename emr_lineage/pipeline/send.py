"""Send captured events to a lineage endpoint (``emr-lineage demo --gateway URL``), in their order.

Each line of an events file is POSTed as it was captured, one after another, so every run's
events arrive in the order the run reported them. The one HTTP stack does the retries: a gateway
answers 503 while its archive or queue is unavailable, and re-sending is safe (the gateway
deduplicates by content), so POSTs are retried too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from emr_lineage.http import DEFAULT_TIMEOUT, HttpClient
from emr_lineage.marquez.api import LINEAGE_ENDPOINT


def send_events(
    events_path: Path,
    url: str,
    *,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_sent: Callable[[int], None] | None = None,
) -> int:
    """POST every event of ``events_path`` (JSONL) to ``url`` + the lineage endpoint; returns how many.

    A refusal (4xx) or a gateway that stays unavailable raises :class:`~emr_lineage.http.HttpError`.
    """
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    target = url.rstrip("/") + LINEAGE_ENDPOINT
    sent = 0
    with HttpClient(timeout=timeout, retry_methods=("POST",), headers=headers) as client:
        with events_path.open("rb") as lines:
            for line in lines:
                if line.strip():
                    client.request("POST", target, data=line.strip()).raise_for_status()
                    sent += 1
                    if on_sent:
                        on_sent(sent)
    return sent
