"""OpenLineage dataset naming of storage URIs, Marquez node ids, and the names of what an event leaves unnamed.

The one place that turns a storage location into the ``(namespace, name)`` pair the
OpenLineage Spark integration reports for it (OpenLineage naming spec, ``PathUtils.java``):

* ``s3://b/k``, ``s3a://b/k``, ``s3n://b/k`` -> ``("s3://b", "k")`` (no leading slash);
* ``gs://b/k`` -> ``("gs://b", "k")``;
* ``file:/abs``, ``file:///abs`` or ``/abs`` -> ``("file", "/abs")``;
* ``hdfs://nn:8020/p`` -> ``("hdfs://nn:8020", "/p")``; other ``scheme://authority/path``
  URIs likewise keep the path with its leading slash.

Trailing slashes are dropped (``raw/orders/`` and ``raw/orders`` are one dataset). The local
capture names datasets with :func:`dataset_identity` and contracts resolve their placeholders
with it, so both agree by construction.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from emr_lineage.errors import EmrLineageError

_S3_SCHEMES = frozenset({"s3", "s3a", "s3n"})
# Object stores whose OpenLineage dataset name is the key without a leading slash.
_OBJECT_STORE_SCHEMES = _S3_SCHEMES | {"gs"}
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_OBJECT_STORE_NAMESPACE_RE = re.compile(r"^(s3a|s3n|s3|gs)://([^/]+)$", flags=re.IGNORECASE)
# What the graph and the runs' history call a job without a name and a job or dataset without a namespace.
UNNAMED_JOB = "(unnamed)"
UNKNOWN_NAMESPACE = "(unknown)"


class NamingError(EmrLineageError, ValueError):
    """A string that cannot be read as a storage URI."""


def _strip_trailing_slashes(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped or "/"


def dataset_identity(uri: str | os.PathLike[str]) -> tuple[str, str]:
    """Return the OpenLineage ``(namespace, name)`` of a storage URI or local path.

    A relative local path is made absolute against the current directory, as Spark does.
    Raises :class:`NamingError` for an empty string or a URI without a bucket/host.
    """
    text = os.fspath(uri).strip()
    if not text:
        raise NamingError("empty dataset URI")
    if not _SCHEME_RE.match(text):
        return "file", _strip_trailing_slashes(os.path.abspath(text))
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme == "file":
        # file:/abs, file:///abs and file://localhost/abs all name the same local path.
        if parts.netloc not in ("", "localhost"):
            raise NamingError(f"file URI with a remote host is not a local path: {text}")
        return "file", _strip_trailing_slashes(parts.path or "/")
    if not parts.netloc:
        raise NamingError(f"URI without a bucket or host: {text}")
    if scheme in _OBJECT_STORE_SCHEMES:
        namespace_scheme = "s3" if scheme in _S3_SCHEMES else scheme
        key = parts.path.strip("/")
        return f"{namespace_scheme}://{parts.netloc}", key or "/"
    return f"{scheme}://{parts.netloc}", _strip_trailing_slashes(parts.path or "/")


def canonical_namespace(namespace: str) -> str:
    """Normalise a dataset namespace alone: ``s3a://b`` and ``s3n://b/`` -> ``s3://b``.

    The one namespace rule of emr-lineage (:func:`canonical_dataset` and the lineage gateway
    use it): S3 schemes become ``s3``, object-store schemes are lower-cased and trailing
    slashes are dropped; any other namespace keeps its spelling without trailing slashes.
    """
    ns = namespace.rstrip("/") or namespace
    match = _OBJECT_STORE_NAMESPACE_RE.match(ns)
    if match:
        scheme = match.group(1).lower()
        scheme = "s3" if scheme in _S3_SCHEMES else scheme
        return f"{scheme}://{match.group(2)}"
    return ns


def canonical_dataset(namespace: str, name: str) -> tuple[str, str]:
    """Normalise an already-split dataset identity the way :func:`dataset_identity` would.

    Used to recognise one dataset reported under two spellings (``s3a://`` vs ``s3://``,
    a trailing slash, a leading slash on an S3 key). Non-storage namespaces (catalogs,
    databases) are returned with only trailing slashes removed.
    """
    ns = canonical_namespace(namespace)
    if _OBJECT_STORE_NAMESPACE_RE.match(ns):
        return ns, name.strip("/") or "/"
    if ns == "file" or "://" in ns:
        return ns, _strip_trailing_slashes(name) if name else name
    return ns, name


def dataset_uri(namespace: str, name: str) -> str:
    """The readable URI form of a dataset identity (``s3://b/k``, ``/abs/path``), for messages."""
    if namespace == "file":
        return name
    if "://" in namespace and not namespace.startswith(("arn:", "hive://")):
        sep = "" if name.startswith("/") else "/"
        return f"{namespace}{sep}{name}"
    return f"{namespace}:{name}"


def dataset_node_id(namespace: str, name: str) -> str:
    """Marquez's node id of a dataset: ``dataset:<namespace>:<name>``."""
    return f"dataset:{namespace}:{name}"


def job_node_id(namespace: str, name: str) -> str:
    """Marquez's node id of a job: ``job:<namespace>:<name>``."""
    return f"job:{namespace}:{name}"
