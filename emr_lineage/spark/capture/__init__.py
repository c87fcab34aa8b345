"""Local OpenLineage capture for PySpark: lineage without the OpenLineage jar.

``install(spark)`` starts capturing one session's application; ``emr_lineage.spark.capture.run``
runs an unmodified job file with the capture installed on the session it creates.
"""

from emr_lineage.spark.capture.listener import LineageCapture
from emr_lineage.spark.capture.session import active_captures, install, install_hooks, uninstall_hooks

__all__ = ["LineageCapture", "active_captures", "install", "install_hooks", "uninstall_hooks"]
