"""The lineage gateway: the ingest and forward Lambdas between OpenLineage clients and Marquez.

Built without Docker: the Lambda asset holds the files of :data:`emr_lineage.gateway.config.ASSET_FILES`
(among them the readers' event checks, ``lineage.schemas``), the pinned OpenLineage schemas and the
wheels of :data:`~emr_lineage.gateway.config.ASSET_DISTRIBUTIONS`, unpacked; boto3 is the runtime's.

* ingest (:mod:`.ingest`): check the key, size and shape of a POSTed event, archive the raw body
  to S3, enqueue the canonical event on an SQS FIFO queue, answer 201 once both are durable;
* forward (:mod:`.forward`): post each queued event to Marquez in queue order, with bounded
  retries, and report partial batch failures that block only the failed event's own run;
* :mod:`.aws_lambda`: the two Lambda handlers; :mod:`.config`: their environment variables.
"""
