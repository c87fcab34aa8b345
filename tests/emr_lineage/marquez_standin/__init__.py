"""A stand-in for Marquez 0.51.1's HTTP API: an in-memory model whose answers are computed from
the events POSTed to it, faithful to what a real Marquez 0.51.1 answered (the recordings under
tests/emr_lineage/fixtures/marquez-0.51/). See MarquezModel."""

from .model import MarquezModel
from .reply import Reply

__all__ = ["MarquezModel", "Reply"]
