"""Layout of the EMR artifacts bucket: one place for every prefix.

The EMR stack creates the bucket, uploads `bootstrap/` and `jobs/` (and prunes them to the
repository's files on every deploy) and scopes the node role to these prefixes; `listener stage`
writes `listener/`; `launch`/`e2e` stage scripts under `staged-jobs/<sha256>/`, out of the deploy's
reach, so a deploy never deletes the script of a pending step; EMR writes its logs under
`emr-logs/` (EMR Serverless job runs under `serverless-logs/`) and reads TLS certificates from `tls/`;
`launch --serverless` stages the Java truststore of `openlineage.trusted_ca` under `truststores/`.
"""

from __future__ import annotations

BOOTSTRAP_PREFIX = "bootstrap/"
JOBS_PREFIX = "jobs/"
STAGED_JOBS_PREFIX = "staged-jobs/"
LISTENER_PREFIX = "listener/"
LOGS_PREFIX = "emr-logs/"
SERVERLESS_LOGS_PREFIX = "serverless-logs/"
TLS_PREFIX = "tls/"
TRUSTSTORES_PREFIX = "truststores/"
BOOTSTRAP_SCRIPT_NAME = "install-openlineage.sh"
BOOTSTRAP_SCRIPT_KEY = f"{BOOTSTRAP_PREFIX}{BOOTSTRAP_SCRIPT_NAME}"
TLS_CERTIFICATES_KEY = f"{TLS_PREFIX}emr-tls-certificates.zip"
