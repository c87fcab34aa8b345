from stacks.monitoring.metrics import MonitoredGateway
from stacks.monitoring.stack import MonitoringStack

__all__ = ["MonitoredGateway", "MonitoringStack"]
