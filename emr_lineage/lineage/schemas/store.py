"""Where the pinned OpenLineage JSON schemas live, and how they get there.

The schemas are third-party documents (the OpenLineage spec, Apache-2.0): the package does not
ship them. ``emr-lineage schemas fetch`` downloads the pinned ones from their ``$id`` URLs (or
copies them from a local directory with ``--from-dir``) into the schema directory, and the event
checks read them from there:

1. ``--schema-dir DIR`` of the command (``directory`` argument here), else
2. ``$EMR_LINEAGE_SCHEMA_DIR``, else
3. the user cache: ``platformdirs.user_cache_dir("emr-lineage")/openlineage-spec/2-0-2``.

Every document is checked before it is written: valid UTF-8 JSON, a JSON object whose ``$id`` is
the URL it was pinned under, a draft 2020-12 JSON Schema. A fetch writes all the files or none.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from emr_lineage.errors import EmrLineageError, json_type
from emr_lineage.marquez.api import http_url

if TYPE_CHECKING:  # the HTTP stack (requests) is imported only to fetch: readers of events start without it
    from emr_lineage.http import HttpClient

SPEC_VERSION = "2-0-2"
SCHEMA_DIR_ENV_VAR = "EMR_LINEAGE_SCHEMA_DIR"
CANONICAL_BASE_URL = "https://openlineage.io/spec/"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
FETCH_COMMAND = "emr-lineage schemas fetch"
DEFAULT_FETCH_TIMEOUT = 30.0
MAX_SCHEMA_BYTES = 1 << 20  # the largest pinned schema is under 10 KiB


@dataclass(frozen=True)
class PinnedSchema:
    """One schema of the store: its file name there and the ``$id`` it must carry."""

    filename: str
    schema_id: str

    @property
    def relative_url(self) -> str:
        """The ``$id`` below :data:`CANONICAL_BASE_URL` (what a mirror serves under its base URL)."""
        return self.schema_id.removeprefix(CANONICAL_BASE_URL)


# The OpenLineage 2-0-2 event schema and the facet schemas the checks use
# (https://github.com/OpenLineage/OpenLineage/tree/8f02abfb7a252783b95df79f443edb13959bf52c/spec).
EVENT_SCHEMA = PinnedSchema("OpenLineage.json", f"{CANONICAL_BASE_URL}{SPEC_VERSION}/OpenLineage.json")
PINNED_SCHEMAS = (
    EVENT_SCHEMA,
    PinnedSchema("ParentRunFacet.json", f"{CANONICAL_BASE_URL}facets/1-2-0/ParentRunFacet.json"),
    PinnedSchema("SchemaDatasetFacet.json", f"{CANONICAL_BASE_URL}facets/1-2-0/SchemaDatasetFacet.json"),
    PinnedSchema("ColumnLineageDatasetFacet.json", f"{CANONICAL_BASE_URL}facets/1-2-0/ColumnLineageDatasetFacet.json"),
    PinnedSchema("SymlinksDatasetFacet.json", f"{CANONICAL_BASE_URL}facets/1-0-1/SymlinksDatasetFacet.json"),
    PinnedSchema(
        "DatasetVersionDatasetFacet.json", f"{CANONICAL_BASE_URL}facets/1-0-1/DatasetVersionDatasetFacet.json"
    ),
)


class SchemaStoreError(EmrLineageError):
    """The schemas cannot be fetched, copied or read (one line, with the way out)."""


def default_schema_dir() -> Path:
    """The user cache location of the pinned schemas."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("emr-lineage")) / "openlineage-spec" / SPEC_VERSION


def schema_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """Where the schemas are read and written: ``directory``, ``$EMR_LINEAGE_SCHEMA_DIR``, the user cache.

    An empty ``directory`` is an error; an empty environment variable counts as unset.
    """
    if directory is not None:
        if not os.fspath(directory):
            raise SchemaStoreError("--schema-dir: empty path (give a directory)")
        return Path(directory).expanduser()
    configured = os.environ.get(SCHEMA_DIR_ENV_VAR)
    return Path(configured).expanduser() if configured else default_schema_dir()


def missing_message(directory: Path) -> str:
    """Why there are no schema checks, and how to get them (one line)."""
    return (
        f"no OpenLineage {SPEC_VERSION} JSON schemas in {directory}: get them with `{FETCH_COMMAND}` "
        f"(or point --schema-dir / {SCHEMA_DIR_ENV_VAR} at a directory that holds them)"
    )


def check_document(raw: bytes, pinned: PinnedSchema, source: str) -> dict[str, Any]:
    """The schema in ``raw`` if it is the pinned one; raises :class:`SchemaStoreError` naming ``source``."""
    if len(raw) > MAX_SCHEMA_BYTES:
        raise SchemaStoreError(f"{source}: larger than {MAX_SCHEMA_BYTES} bytes, not the {pinned.filename} schema")
    try:
        document = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SchemaStoreError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise SchemaStoreError(f"{source}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(document, dict):
        raise SchemaStoreError(f"{source}: a JSON Schema is a JSON object, got a JSON {json_type(document)}")
    if document.get("$id") != pinned.schema_id:
        raise SchemaStoreError(f"{source}: $id is {document.get('$id')!r}, expected {pinned.schema_id!r}")
    if document.get("$schema") != JSON_SCHEMA_DIALECT:
        raise SchemaStoreError(f"{source}: $schema is {document.get('$schema')!r}, expected {JSON_SCHEMA_DIALECT!r}")
    try:
        _meta_schema().validate(document)
    except jsonschema_rs.ValidationError as exc:
        raise SchemaStoreError(f"{source}: not a valid JSON Schema: {_wording(exc)}") from None
    return document


def _wording(error: Any) -> str:
    """The problem, worded as ``jsonschema`` words a bad pattern (a ``patternProperties`` key's
    error comes wrapped in its ``propertyNames`` one)."""
    inner = error
    while isinstance(inner.kind, jsonschema_rs.ValidationErrorKind.PropertyNames):
        inner = inner.kind.error
    return f"{inner.instance!r} is not a 'regex'" if getattr(inner.kind, "format", None) == "regex" else error.message


def _python_regex(value: str) -> bool:
    """A ``regex`` as ``jsonschema``'s FormatChecker sees it: Python's re compiles it (the worded
    checks use re; a warning such as "possible nested set" is not an error)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(value)
    except re.error:
        return False
    return True


@lru_cache(maxsize=1)
def _meta_schema() -> Any:
    """The JSON Schema 2020-12 meta-schema (built into jsonschema-rs), with its ``regex`` format
    checked by Python's re: jsonschema-rs's own meta check skips formats. About 5 ms, once; the
    pure-Python check it replaces took 35 ms of every read's start-up."""
    return jsonschema_rs.validator_for(
        {"$ref": JSON_SCHEMA_DIALECT}, validate_formats=True, formats={"regex": _python_regex}
    )


def read_store(directory: Path) -> dict[str, dict[str, Any]] | None:
    """The pinned schemas in ``directory`` (file name -> schema), each checked.

    None when the directory holds none of them; raises :class:`SchemaStoreError` when it holds
    some but not all, or one that is not the pinned schema.
    """
    present = [p for p in PINNED_SCHEMAS if (directory / p.filename).is_file()]
    if not present:
        return None
    missing = [p.filename for p in PINNED_SCHEMAS if p not in present]
    if missing:
        raise SchemaStoreError(
            f"{directory}: incomplete OpenLineage schema directory (missing {', '.join(missing)}): "
            f"run `{FETCH_COMMAND}` again"
        )
    documents = {}
    for pinned in PINNED_SCHEMAS:
        path = directory / pinned.filename
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise SchemaStoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            documents[pinned.filename] = check_document(raw, pinned, str(path))
        except SchemaStoreError as exc:
            raise SchemaStoreError(f"{exc} (run `{FETCH_COMMAND}` again)") from None
    return documents


def store_is_complete(directory: Path) -> bool:
    """True if ``directory`` holds every pinned schema and each is the one pinned."""
    try:
        return read_store(directory) is not None
    except SchemaStoreError:
        return False


def _write_all(directory: Path, contents: Mapping[str, bytes]) -> list[Path]:
    """Write every file or none: all go to temporary files first, then each is renamed into place."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SchemaStoreError(f"{directory}: cannot create the schema directory: {exc.strerror or exc}") from None
    staged: list[tuple[Path, Path]] = []
    try:
        for filename, raw in contents.items():
            temporary = directory / f".{filename}.{os.getpid()}.tmp"
            temporary.write_bytes(raw)
            staged.append((temporary, directory / filename))
        for temporary, final in staged:
            os.replace(temporary, final)
    except OSError as exc:
        raise SchemaStoreError(f"{directory}: cannot write the schemas: {exc.strerror or exc}") from None
    finally:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
    return [final for _, final in staged]


def install_from_dir(source: str | os.PathLike[str], directory: Path) -> list[Path]:
    """Copy the pinned schemas from a local directory (flat: ``OpenLineage.json``, ``ParentRunFacet.json``...)
    into ``directory``, with the same checks as a download. Returns the files written."""
    if not os.fspath(source):
        raise SchemaStoreError("--from-dir: empty path (give a directory)")
    origin = Path(source).expanduser()
    if not origin.is_dir():
        raise SchemaStoreError(f"{origin}: no such directory")
    contents = {}
    for pinned in PINNED_SCHEMAS:
        path = origin / pinned.filename
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise SchemaStoreError(f"{path}: missing (the directory must hold every pinned schema)") from None
        except OSError as exc:
            raise SchemaStoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
        check_document(raw, pinned, str(path))
        contents[pinned.filename] = raw
    return _write_all(directory, contents)


def _download(client: HttpClient, url: str) -> bytes:
    """GET ``url`` through the project's HTTP stack (retries, one deadline, size cap): the body of a 200."""
    from emr_lineage.http import HttpError

    try:
        reply = client.get(url)
    except HttpError as exc:
        if exc.kind == "too_large":
            raise SchemaStoreError(f"{url}: larger than {MAX_SCHEMA_BYTES} bytes, not a pinned schema") from None
        raise SchemaStoreError(
            f"{exc}; without network access to it, copy the schemas from a local directory: "
            f"`{FETCH_COMMAND} --from-dir DIR`"
        ) from None
    if reply.status != 200:
        raise SchemaStoreError(f"GET {url} -> HTTP {reply.status}")
    return reply.body


def mirror_base(base_url: str) -> str:
    """``base_url`` ending in ``/``, the schemas' relative URLs go after it; SchemaStoreError naming
    ``--base-url`` when it is not an http(s) URL with a host (the Marquez URLs' check)."""
    try:
        base = http_url(base_url, example=CANONICAL_BASE_URL)
    except ValueError as exc:
        raise SchemaStoreError(f"--base-url {exc}") from None
    return base if base.endswith("/") else base + "/"


def fetch(
    directory: Path,
    base_url: str = CANONICAL_BASE_URL,
    timeout: float = DEFAULT_FETCH_TIMEOUT,
) -> list[Path]:
    """Download the pinned schemas from ``base_url`` (their ``$id`` URLs by default; a mirror of
    ``https://openlineage.io/spec/`` otherwise) into ``directory``. Returns the files written.

    Every document is checked (:func:`check_document`) before anything is written.
    """
    base = mirror_base(base_url)
    from emr_lineage.http import HttpClient

    contents = {}
    with HttpClient(timeout=timeout, max_bytes=MAX_SCHEMA_BYTES, headers={"Accept": "application/json"}) as client:
        for pinned in PINNED_SCHEMAS:
            url = base + pinned.relative_url
            raw = _download(client, url)
            check_document(raw, pinned, url)
            contents[pinned.filename] = raw
    return _write_all(directory, contents)
