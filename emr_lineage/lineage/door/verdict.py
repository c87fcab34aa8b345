"""A door's refusal (the gateway's answer, why a reader of the archive skips a body): an HTTP status and one
line of reason (standard library only)."""

from __future__ import annotations

from dataclasses import dataclass

from emr_lineage.errors import one_line

__all__ = ["Rejected", "one_line"]


@dataclass(frozen=True)
class Rejected:
    """A request or event a door refuses: the HTTP status and a one-line reason."""

    status: int
    reason: str

    @property
    def retriable(self) -> bool:
        """Whether sending the same thing again may succeed (the gateway could not store it)."""
        return self.status >= 500
