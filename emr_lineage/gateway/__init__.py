"""The lineage gateway: the ingest and forward Lambdas between OpenLineage clients and Marquez.

Standard library and boto3 only (the Lambda asset is plain files, built without Docker); from
emr_lineage it imports only ``errors``, ``lineage.naming``, ``lineage.times`` and ``marquez.api``
(:data:`emr_lineage.gateway.config.ASSET_FILES`).

* ingest (:mod:`.ingest`): check the key, size and shape of a POSTed event, archive the raw body
  to S3, enqueue the canonical event on an SQS FIFO queue, answer 201 once both are durable;
* forward (:mod:`.forward`): post each queued event to Marquez in queue order, with bounded
  retries, and report partial batch failures that block only the failed event's own run;
* :mod:`.aws_lambda`: the two Lambda handlers; :mod:`.config`: their environment variables.
"""
