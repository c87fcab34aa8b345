"""Where the Marquez HTTP API lives on its server: the one place ``/api/v1`` is written.

No imports: the Spark configuration (``spark.openlineage.transport.endpoint``) and the Marquez
client both take their paths from here.
"""

from __future__ import annotations

API_ROOT = "/api/v1"
DEFAULT_DEPTH = 20  # how far a lineage request walks from its node
LINEAGE_ENDPOINT = f"{API_ROOT}/lineage"  # POST: OpenLineage events; GET: the lineage graph
# POST: a JSON array of OpenLineage events, the OpenLineage spec's batch endpoint
# (https://github.com/OpenLineage/OpenLineage/pull/4109). Marquez has none
# (https://github.com/MarquezProject/marquez/issues/2918): the lineage gateway serves it and
# forwards each event to LINEAGE_ENDPOINT.
LINEAGE_BATCH_ENDPOINT = f"{LINEAGE_ENDPOINT}/batch"
