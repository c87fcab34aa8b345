"""The one way a boto3 client is made: a session sharing botocore's service models, a region, a config.

boto3 and botocore only: the gateway's Lambda asset carries this module (``gateway/config.py``);
the tools' readable errors and environment rules are in :mod:`emr_lineage.aws.clients`.
"""

from __future__ import annotations

import os
from typing import Any

import boto3
import botocore.loaders
import botocore.model
import botocore.session
from botocore.config import Config

# Standard mode: throttling and transient errors retried with backoff, the same for every client
# (https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html).
RETRY_POLICY = Config(retries={"mode": "standard", "max_attempts": 5})

# One loader of botocore's service models for every session of the process: a new session would
# otherwise parse the same JSON models again (tenths of a second per service).
_SERVICE_MODELS = botocore.loaders.create_loader()


def boto_session(region: str | None = None) -> boto3.session.Session:
    """A boto3 session sharing the process's service models, in ``region``, else ``AWS_REGION``
    (which the AWS CLI v2 and SDKs read but boto3 does not), else boto3's own chain."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _SERVICE_MODELS)
    return boto3.session.Session(botocore_session=core, region_name=region or os.environ.get("AWS_REGION"))


def new_client(
    service: str, *, session: boto3.session.Session | None = None, config: Config | None = RETRY_POLICY
) -> Any:
    """A client of ``service`` from ``session`` (default: :func:`boto_session`) with ``config``
    (default: :data:`RETRY_POLICY`; None: botocore's defaults)."""
    return (session or boto_session()).client(service, config=config)


def service_model(service: str) -> botocore.model.ServiceModel:
    """botocore's model of ``service``, from the process's one loader of the service models."""
    return botocore.model.ServiceModel(_SERVICE_MODELS.load_service_model(service, "service-2"), service_name=service)
