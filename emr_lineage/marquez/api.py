"""Where the Marquez HTTP API lives on its server: the one place ``/api/v1`` is written.

No imports: the Spark configuration (``spark.openlineage.transport.endpoint``) and the Marquez
client both take their paths from here.
"""

from __future__ import annotations

API_ROOT = "/api/v1"
DEFAULT_DEPTH = 20  # how far a lineage request walks from its node
LINEAGE_ENDPOINT = f"{API_ROOT}/lineage"  # POST: OpenLineage events; GET: the lineage graph
