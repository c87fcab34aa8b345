"""The base of every settings model, and the checks several of them share."""

from __future__ import annotations

import ipaddress

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    # strict: "2" is not an int, "true" is not a bool; forbid: a mistyped key is an error.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def valid_cidr(value: str, key: str) -> str:
    try:
        network = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid CIDR block for {key} ({exc})") from None
    return str(network)
