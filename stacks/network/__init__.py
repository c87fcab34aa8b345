"""The network component: the VPC everything else runs in."""

from stacks.network.stack import NetworkStack

__all__ = ["NetworkStack"]
