"""docs/configuration.md is the settings model's reference, rendered from its field descriptions."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from emr_lineage.settings import reference
from emr_lineage.settings.model import EnvironmentSettings


def test_the_committed_reference_is_current(repo_root):
    committed = (repo_root / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == reference.render(), f"docs/configuration.md is stale: run .venv/bin/{reference.COMMAND}"


def _keys(value: dict, prefix: str = "") -> set[str]:
    """Every dotted key of a cdk.json object, the keys of a list's objects not included."""
    keys = set()
    for name, item in value.items():
        keys.add(prefix + name)
        if isinstance(item, dict) and name != "tags":
            keys |= _keys(item, f"{prefix}{name}.")
    return keys


def test_the_reference_names_every_key_the_shipped_environments_set(repo_root):
    block = json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]
    keys = _keys(block["versions"], "versions.")
    for environment in block["environments"].values():
        keys |= _keys(environment)
    text = reference.render()
    # A key has its row, an object of the environment its section.
    assert sorted(key for key in keys if f"| `{key}`" not in text and f"### `{key}`" not in text) == []


def test_a_key_without_a_description_stops_the_reference():
    class Undocumented(BaseModel):
        documented: int = 1
        bare: int = 2

    Undocumented.model_fields["documented"].description = "Has one."
    with pytest.raises(ValueError, match=r"x\.bare has no description"):
        reference._rows(Undocumented.model_fields, "x.")


@pytest.mark.parametrize(
    ("key", "kind", "default"),
    [
        ("gateway.forward_retries", "integer 1..10", "required"),
        ("emr_serverless.max_vcpu", "integer 1..4000", "`16`"),
        ("marquez.retention_days", "integer 1..3650, or null", "`null`"),
        ("network.interface_endpoints", "list, each one of `sts`, `glue`", "`[]`"),
        ("network.nat_gateways", "integer 1..6, or null", "`null`"),
        ("marquez.image_registry", "object (by `type`)", '`{"type": "direct"}`'),
    ],
)
def test_a_row_gives_the_type_bounds_and_default_the_model_checks(key, kind, default):
    (row,) = [line for line in reference.render().splitlines() if line.startswith(f"| `{key}` |")]
    _, type_cell, default_cell, _ = row.split(" | ")
    assert type_cell.startswith(kind)
    assert default_cell == default


def test_every_field_of_the_model_has_a_description():
    def undocumented(model: type[BaseModel], prefix: str) -> list[str]:
        found = []
        for name, field in model.model_fields.items():
            if not field.description:
                found.append(prefix + name)
            for nested in reference._models(field.annotation):
                found += undocumented(nested, f"{prefix}{name}.")
        return found

    assert undocumented(EnvironmentSettings, "") == []
