"""Where the Marquez HTTP API lives on its server: the one place ``/api/v1`` is written.

No imports: the Spark configuration (``spark.openlineage.transport.endpoint``) and the Marquez
client both take their paths from here.
"""

from __future__ import annotations

API_ROOT = "/api/v1"
LINEAGE_ENDPOINT = f"{API_ROOT}/lineage"  # POST: OpenLineage events; GET: the lineage graph
