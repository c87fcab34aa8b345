from stacks.monitoring.metrics import MonitoredGateway, MonitoredService
from stacks.monitoring.stack import MonitoringStack

__all__ = ["MonitoredGateway", "MonitoredService", "MonitoringStack"]
