from stacks.gateway.stack import GatewayStack

__all__ = ["GatewayStack"]
