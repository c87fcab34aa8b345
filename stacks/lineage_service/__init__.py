"""The lineage service component: Marquez, its database and its internal load balancer."""

from stacks.lineage_service.stack import LineageServiceStack

__all__ = ["LineageServiceStack"]
