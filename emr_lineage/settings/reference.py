"""The configuration reference, docs/configuration.md, rendered from the settings model's field descriptions.

``python -m emr_lineage.settings.reference docs/configuration.md`` writes it (without a file: to stdout);
a test checks that the committed file is what this renders. Edit the descriptions in the models, not the file.
"""

from __future__ import annotations

import enum
import json
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from emr_lineage.settings.loader import NOT_ENVIRONMENT_KEYS
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.versions import Versions

COMMAND = "python -m emr_lineage.settings.reference docs/configuration.md"

HEADER = f"""# Configuration reference

<!-- Generated from the field descriptions of emr_lineage/settings/ by `{COMMAND}`;
a test checks that it is current. Edit the descriptions there, not this file. -->

One source of truth: the `emr-lineage` object in [`cdk.json`](../cdk.json) context, validated by
the settings model in [`emr_lineage/settings/`](../emr_lineage/settings/model.py) (pydantic, strict
types: `"2"` is not an integer; unknown keys are refused). Select the environment with `-c env=NAME`
(`make ... ENV=NAME`; default `dev`). A missing, mistyped or invalid key stops synth (and every
`emr-lineage` command) with one message naming it, for example:

```
emr-lineage: invalid configuration in cdk.json context:
  emr-lineage.environments.prod.database.backup_retention: unknown key (did you mean 'backup_retention_days'?)
  emr-lineage.environments.prod.database.backup_retention_days: missing required key
```

`emr-lineage config --env prod` prints the resolved settings of an environment. Every key is required
unless the Default column gives its default (null or absent: the default). How to add an environment
and what each change replaces on the next deploy: [deploy.md](deploy.md).

```json
"emr-lineage": {{
  "versions": {{...}},
  "environments": {{"dev": {{...}}, "prod": {{...}}}}
}}
```
"""

TABLE_HEAD = "| Key | Type | Default | Meaning |\n|---|---|---|---|"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _constraints(metadata: list[Any]) -> str:
    """``1..10``, ``≥ 1024``, ``at least 1``: the bounds a field's metadata sets (patterns are left to the text)."""

    def bound(name: str) -> Any:
        return next((getattr(item, name) for item in metadata if getattr(item, name, None) is not None), None)

    low, high = bound("ge"), bound("le")
    if low is not None and high is not None:
        return f" {low}..{high}"
    if low is not None:
        return f" ≥ {low}"
    if high is not None:
        return f" ≤ {high}"
    lengths = [f"at least {bound('min_length')}"] if bound("min_length") is not None else []
    lengths += [f"at most {bound('max_length')}"] if bound("max_length") is not None else []
    return "".join(f", {text}" for text in lengths)


def _type(annotation: Any, metadata: list[Any] = ()) -> str:
    """A reader's name for a field's type: ``integer 1..10``, ``one of `a`, `b```, ``list of string``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        inner = [m for extra in args[1:] for m in (extra.metadata if isinstance(extra, FieldInfo) else [extra])]
        return _type(args[0], [*metadata, *inner])
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if all(isinstance(a, type) and issubclass(a, BaseModel) for a in options):
            named = "object" if len(options) == 1 else "object (by `type`)"
        else:
            named = " or ".join(_type(a) for a in options)
        return named + (", or null" if type(None) in args else "")
    if origin is Literal:
        return ("one of " if len(args) > 1 else "") + ", ".join(f"`{a}`" for a in args)
    if origin is list:
        item = _type(args[0])
        item = f", each {item}" if item.startswith("one of") else f" of {item}s"
        return "list" + item + _constraints(list(metadata))
    if origin is dict:
        return f"object of {_type(args[1])}s (names to values)"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(f"`{m.value}`" for m in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    names = {int: "integer", str: "string", bool: "boolean"}
    return names[annotation] + _constraints(list(metadata))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return f"`{json.dumps(value)}`"


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models a field holds: ``Model``, ``Model | None``, ``Annotated[A | B, ...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) is list:
        return []
    return [model for arg in typing.get_args(annotation) for model in _models(arg)]


def _rows(fields: dict[str, FieldInfo], prefix: str, variant: str = "") -> list[str]:
    """One table row per key, and after an object's row the rows of its keys."""
    rows = []
    for name, field in fields.items():
        if not field.description:
            raise ValueError(f"{prefix}{name} has no description (Field(description=...) in emr_lineage/settings/)")
        key = f"`{prefix}{name}`" + (f" ({variant})" if variant and name != "type" else "")
        rows.append(
            f"| {key} | {_cell(_type(field.annotation, field.metadata))} | {_default(field)} | "
            f"{_cell(field.description)} |"
        )
        variants = _models(field.annotation)
        for nested in variants:
            tag = nested.model_fields.get("type")
            label = f"type `{typing.get_args(tag.annotation)[0]}`" if len(variants) > 1 and tag else ""
            rows += _rows(nested.model_fields, f"{prefix}{name}.", label)
    return rows


def _section(heading: str, text: str, fields: dict[str, FieldInfo], prefix: str) -> str:
    return f"{heading}\n\n{_cell(text)}\n\n{TABLE_HEAD}\n" + "\n".join(_rows(fields, prefix)) + "\n"


def render() -> str:
    """The whole of docs/configuration.md."""
    environment = EnvironmentSettings.model_fields
    keys = {name: field for name, field in environment.items() if name not in NOT_ENVIRONMENT_KEYS}
    parts = [
        HEADER,
        _section("## `versions`", environment["versions"].description or "", Versions.model_fields, "versions."),
        _section(
            "## `environments.<name>`",
            "One object per environment, named by 2–16 lowercase letters, digits and `-`. Its own keys:",
            {name: field for name, field in keys.items() if not _models(field.annotation)},
            "",
        ),
    ]
    for name, field in keys.items():
        for model in _models(field.annotation):
            parts.append(_section(f"### `{name}`", field.description or "", model.model_fields, f"{name}."))
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
