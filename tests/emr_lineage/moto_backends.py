"""moto's in-process backends, imported when a test first looks into one.

A service's models module imports much of moto (moto.emr and moto.cloudformation pull in moto.ec2):
imported by a test module, every pytest-xdist worker would load it while collecting, and a run that
never plays that service would pay for it all the same. ``emr_backends[DEFAULT_ACCOUNT_ID][REGION]``
reads as with moto's own objects.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# moto's default account (moto.core.DEFAULT_ACCOUNT_ID), the one fake credentials act in.
DEFAULT_ACCOUNT_ID = "123456789012"


class Backends:
    """moto's ``BackendDict`` named ``name`` in ``module``, imported on the first lookup."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __getitem__(self, account_id: str) -> Any:
        return getattr(import_module(self.module), self.name)[account_id]


athena_backends = Backends("moto.athena.models", "athena_backends")
cloudformation_backends = Backends("moto.cloudformation.models", "cloudformation_backends")
emr_backends = Backends("moto.emr.models", "emr_backends")
emrserverless_backends = Backends("moto.emrserverless.models", "emrserverless_backends")
