"""A spoke's link to its hub's lineage service (``hub``): the endpoint, the clients' group, the API key."""

from stacks.hub_link.stack import HubLinkStack

__all__ = ["HubLinkStack"]
