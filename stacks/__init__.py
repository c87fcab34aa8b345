"""The emr-lineage CDK stacks, one package per component.

- ``network``: the VPC (subnet tiers, NAT, endpoints, flow logs);
- ``lineage_service``: Marquez (API + web on Fargate), its PostgreSQL database and internal ALB;
- ``data_lake``: the KMS-encrypted lake bucket, its Glue databases and Lake Formation setup;
- ``emr``: artifacts bucket, EMR roles, security configuration, Lake Formation grants, launch spec;
- ``gateway``: the lineage gateway (ingest and forwarder Lambdas, S3 archive, SQS FIFO queues);
- ``monitoring``: the alarm topic, alarms, EMR failure events and the dashboard;
- ``shared``: helpers every component uses (cdk-nag acknowledgements, settings -> CDK values,
  the server access logs bucket, the EMR managed-policy tag).

Each component package exports its stack; a stack takes keyword-only props and exposes what
other stacks need as attributes. ``app.py`` passes those attributes from stack to stack.
"""
