"""The base of every settings model, and the checks several of them share."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, ConfigDict

from emr_lineage.settings.limits import LOG_RETENTION_DAYS


class Strict(BaseModel):
    # strict: "2" is not an int, "true" is not a bool; forbid: a mistyped key is an error.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def valid_cidr(value: str, key: str) -> str:
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid CIDR block for {key} ({exc})") from None
    return str(network)


def check_retention(value: int) -> int:
    if value not in LOG_RETENTION_DAYS:
        raise ValueError(f"{value} is not a CloudWatch Logs retention period; use one of {list(LOG_RETENTION_DAYS)}")
    return value
