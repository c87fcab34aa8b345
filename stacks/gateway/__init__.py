"""The lineage gateway's stack. ``GatewayStack`` is imported on first use, so that
``python -m stacks.gateway.packages`` (``make setup``) starts without the CDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stacks.gateway.stack import GatewayStack

__all__ = ["GatewayStack"]


def __getattr__(name: str) -> Any:
    if name == "GatewayStack":
        from stacks.gateway.stack import GatewayStack

        return GatewayStack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
