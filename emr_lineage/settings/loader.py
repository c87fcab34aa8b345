"""Load and validate the ``emr-lineage`` block of ``cdk.json`` context into typed settings.

Errors name the key (``emr-lineage.environments.<env>.<key>``) and suggest the closest real key.
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from emr_lineage.errors import EmrLineageError, json_type
from emr_lineage.settings.data_lake import DataLakeSettings
from emr_lineage.settings.model import EnvironmentSettings

CONTEXT_KEY = "emr-lineage"
ENV_CONTEXT_KEY = "env"
DEFAULT_ENV = "dev"
# Commands read ./cdk.json unless --cdk-json names another file.
DEFAULT_CDK_JSON = Path("cdk.json")


class ConfigError(EmrLineageError):
    """A configuration problem, with a message that names the offending key."""


# Fields of EnvironmentSettings that are no key of an environment's object: the loader sets them.
NOT_ENVIRONMENT_KEYS = ("name", "versions")
_ENV_NAME = re.compile(r"^[a-z][a-z0-9-]{1,15}$")
# pydantic's error types for a section that is not an object (its messages name the model's class).
_NOT_AN_OBJECT = ("model_type", "dict_type", "model_attributes_type")


def _not_an_object(value: Any) -> str:
    """What a settings section that is not an object is, in one wording."""
    return f"expected an object ({{...}}), not a JSON {json_type(value)}"


def _format_validation_error(
    exc: ValidationError, env: str, raw: dict[str, Any], model: type[BaseModel], source: str | None
) -> str:
    lines = []
    for err in exc.errors():
        loc = list(err["loc"])
        # A check of the whole environment has no location: the environment itself is the key.
        where = ".".join(str(p) for p in (loc if loc and loc[0] == "versions" else ["environments", env, *loc]))
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            hint = _did_you_mean(loc, model)
            message = "unknown key" + (f" (did you mean {hint!r}?)" if hint else "")
        elif err["type"] == "missing":
            message = "missing required key"
        elif err["type"] in _NOT_AN_OBJECT:
            message = _not_an_object(err["input"])
        lines.append(f"{CONTEXT_KEY}.{where}: {message}")
    return f"invalid configuration in {source or 'cdk.json context'}:\n  " + "\n  ".join(lines)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation allows: ``Model``, ``Model | None``, ``Annotated[A | B, ...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _did_you_mean(loc: list[Any], model: type[BaseModel]) -> str | None:
    """Walk the model along ``loc`` and suggest the closest real key for the last part."""
    current: Any = model
    parts = iter(loc[:-1])
    for part in parts:
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return None
        choices = _models_in(field.annotation)
        if len(choices) > 1:
            # A tagged union: pydantic puts the tag (the "type" value) in the location next.
            tag = next(parts, None)
            choices = [
                m
                for m in choices
                if "type" in m.model_fields and tag in typing.get_args(m.model_fields["type"].annotation)
            ]
        if len(choices) != 1:
            return None
        current = choices[0]
    names = list(getattr(current, "model_fields", {}))
    match = difflib.get_close_matches(str(loc[-1]), names, n=1)
    return match[0] if match else None


def settings_from_context(block: Any, env: str | None, source: str | None = None) -> EnvironmentSettings:
    """Validate the ``emr-lineage`` context block and return one environment's settings; messages name
    ``source``, the file it was read from (--cdk-json), else CDK's context (cdk.json)."""
    env = DEFAULT_ENV if env is None else env
    where = f"{source}: " if source else ""
    if not isinstance(block, dict):
        raise ConfigError(f"{source or 'cdk.json'} context has no {CONTEXT_KEY!r} object; see docs/configuration.md")
    environments = block.get("environments")
    if not isinstance(environments, dict) or not environments:
        raise ConfigError(f"{where}{CONTEXT_KEY}.environments: missing or empty; define at least one environment")
    if env not in environments:
        known = ", ".join(sorted(environments))
        raise ConfigError(
            f"unknown environment {env!r} (--env, or -c {ENV_CONTEXT_KEY}= for cdk); {source or 'cdk.json'} "
            f"defines: {known}"
        )
    if not _ENV_NAME.match(env):
        raise ConfigError(
            f"environment name {env!r}: use 2-16 lowercase letters, digits or '-', starting with a letter"
        )
    raw_env = environments[env]
    if not isinstance(raw_env, dict):
        raise ConfigError(f"{where}{CONTEXT_KEY}.environments.{env}: {_not_an_object(raw_env)}")
    if set(NOT_ENVIRONMENT_KEYS) & set(raw_env):
        raise ConfigError(
            f"{where}{CONTEXT_KEY}.environments.{env}: 'versions' and 'name' are not per-environment keys"
        )
    unknown_top = sorted(set(block) - {"versions", "environments"})
    if unknown_top:
        raise ConfigError(
            f"{where}{CONTEXT_KEY}.{unknown_top[0]}: unknown key (expected 'versions' and 'environments')"
        )
    data = {**raw_env, "name": env, **({"versions": block["versions"]} if "versions" in block else {})}
    try:
        settings = EnvironmentSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, env, data, EnvironmentSettings, source)) from None
    _one_lake_formation_owner(settings, environments, where)
    return settings


def _one_lake_formation_owner(settings: EnvironmentSettings, environments: dict[str, Any], where: str) -> None:
    """Refuse a second environment that manages the Lake Formation settings of the same account and region
    (one object per account and region: two stacks would each rewrite the other's admins)."""
    if not settings.data_lake.manage_lake_formation_settings or not (settings.account and settings.region):
        return
    for other, raw in sorted(environments.items()):
        if other == settings.name or not isinstance(raw, dict):
            continue
        lake = raw.get("data_lake") if isinstance(raw.get("data_lake"), dict) else {}
        default = DataLakeSettings.model_fields["manage_lake_formation_settings"].default
        manages = lake.get("manage_lake_formation_settings", default) is not False
        if manages and (raw.get("account"), raw.get("region")) == (settings.account, settings.region):
            raise ConfigError(
                f"{where}{CONTEXT_KEY}.environments.{settings.name}.data_lake.manage_lake_formation_settings: "
                f"{settings.name} and {other} share account {settings.account} in {settings.region}, whose Lake "
                f"Formation settings can have one owner: set it false in one of them (docs/deploy.md, "
                "'Several environments in one account')"
            )


def load_settings(env: str | None = None, cdk_json: Path = DEFAULT_CDK_JSON) -> EnvironmentSettings:
    """Load settings for the tools, straight from ``cdk.json`` (no CDK app needed)."""
    hint = "pass --cdk-json PATH or run from the emr-lineage checkout"
    try:
        raw = cdk_json.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{cdk_json}: not found; {hint}") from None
    except IsADirectoryError:
        raise ConfigError(f"{cdk_json}: is a directory, not a cdk.json file; {hint}") from None
    except OSError as exc:
        raise ConfigError(f"{cdk_json}: cannot read: {exc.strerror or exc}") from None
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{cdk_json}: not UTF-8 text (byte {exc.start}); is it a cdk.json?") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{cdk_json}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{cdk_json}: expected a JSON object with a 'context' key, got a JSON {json_type(document)}")
    context = document.get("context")
    if not isinstance(context, dict) or CONTEXT_KEY not in context:
        raise ConfigError(f"{cdk_json}: no context.{CONTEXT_KEY!r} block; this is not an emr-lineage cdk.json ({hint})")
    return settings_from_context(context[CONTEXT_KEY], env, str(cdk_json))
