"""``emr-lineage schemas fetch``: put the pinned OpenLineage JSON schemas where the event checks read them.

Exit status: 0 the schemas are in place, 2 they could not be fetched, copied or written (one
``error:`` line naming the URL or file and the problem; nothing is written then).
"""

from __future__ import annotations

import click

from emr_lineage.cli.options import schema_dir_option, timeout_option
from emr_lineage.cli.output import Group, fail
from emr_lineage.lineage.schemas.store import (
    CANONICAL_BASE_URL,
    DEFAULT_FETCH_TIMEOUT,
    SCHEMA_DIR_ENV_VAR,
    SPEC_VERSION,
    fetch,
    install_from_dir,
    mirror_base,
    schema_dir,
    store_is_complete,
)


@click.group("schemas", cls=Group)
def schemas_group() -> None:
    """The OpenLineage JSON schemas the event checks use (see docs/graph.md)."""


@schemas_group.command("fetch")
@schema_dir_option(
    "directory",
    f"Write the schemas in this directory (default: ${SCHEMA_DIR_ENV_VAR}, else the user cache the event checks read).",
)
@click.option(
    "--from-dir",
    "from_dir",
    metavar="DIR",
    help="Copy the schemas from this local directory (OpenLineage.json and the facet schemas, flat) "
    "instead of downloading them; same checks.",
)
@click.option(
    "--base-url",
    default=CANONICAL_BASE_URL,
    show_default=True,
    metavar="URL",
    help="A mirror of the OpenLineage spec site (tests and offline mirrors): each schema is read from "
    "URL + the path of its $id below https://openlineage.io/spec/.",
)
@timeout_option(DEFAULT_FETCH_TIMEOUT)
@click.option(
    "--if-missing", is_flag=True, help="Do nothing when the directory already holds the pinned schemas, all valid."
)
def fetch_command(directory: str | None, from_dir: str | None, base_url: str, timeout: float, if_missing: bool) -> None:
    """Download the pinned OpenLineage spec schemas from their $id URLs (or copy them with --from-dir).

    Each document must be JSON, carry the $id it is pinned under and be a draft 2020-12 JSON Schema;
    if one is not, nothing is written.
    """
    if from_dir is not None and base_url != CANONICAL_BASE_URL:
        fail("give either --from-dir DIR or --base-url URL, not both")
    if from_dir is None:
        mirror_base(base_url)  # a bad URL is refused even when --if-missing then has nothing to fetch
    target = schema_dir(directory)
    if if_missing and store_is_complete(target):
        click.echo(f"OpenLineage {SPEC_VERSION} schemas already in {target}")
        return
    if from_dir is not None:
        written = install_from_dir(from_dir, target)
        source = from_dir
    else:
        written = fetch(target, base_url=base_url, timeout=timeout)
        source = base_url
    click.echo(f"wrote {len(written)} OpenLineage {SPEC_VERSION} schemas to {target} (from {source})")
