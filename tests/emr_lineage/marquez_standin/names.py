"""Marquez's name rules (NamespaceName, JobName/DatasetName, OpenLineageDao.formatNamespaceName)
and its node ids (service/models/NodeId), as the recordings show them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

_NAMESPACE = re.compile(r"[a-zA-Z:;=/0-9_\-.@+]{1,1024}")
_NOT_WRITTEN = re.compile(r"[^a-z:/A-Z0-9\-_.@+]")
_NODE_PREFIX = re.compile(r"(dataset|datasetField|job|run):.*")
# The split point of a node id: a ':' not starting '//' (a URI scheme) or digits (a port).
_NODE_DELIM = re.compile(r":(?!//|\d+)")


class InvalidName(ValueError):
    """Java's IllegalArgumentException from a name's constructor."""


def valid_namespace(name: str) -> bool:
    return bool(_NAMESPACE.fullmatch(name))


def check_namespace(name: str) -> str:
    """NamespaceName.of: raises InvalidName for a name a read can't map back (a 500 in listings)."""
    if not valid_namespace(name):
        raise InvalidName(
            f"namespace '{name}' must contain only letters (a-z, A-Z), numbers (0-9), underscores (_), at (@), "
            "plus (+), dashes (-), colons (:), equals (=), semicolons (;), slashes (/) or dots (.) with a maximum "
            "length of 1024 characters."
        )
    return name


def blank(text: str) -> bool:
    """Java's String.trim().isEmpty(): every char at or below U+0020."""
    return all(ch <= " " for ch in text)


def check_name(name: str) -> str:
    """JobName.of / DatasetName.of: only non-blank."""
    if blank(name):
        raise InvalidName("value must not be blank")
    return name


def format_namespace(name: str) -> str:
    """The namespace Marquez writes for a job or a run event's dataset: other chars become '_'."""
    return _NOT_WRITTEN.sub("_", name)


def path_segments(raw_path: str) -> list[str]:
    """Jersey matches on the encoded path, so an encoded '/' stays inside its segment; each
    segment is then percent-decoded."""
    return [unquote(part) for part in raw_path.split("/") if part]


@dataclass(frozen=True)
class NodeId:
    value: str

    @property
    def kind(self) -> str:
        return self.value.split(":", 1)[0]

    def parts(self, expected: int) -> list[str]:
        """NodeId.parts: a plain split on ':' and '#' when it gives exactly ``expected`` parts,
        else a split at the first delimiters not followed by '//' or a digit."""
        simple = re.split(r"[:#]", self.value)
        while simple and simple[-1] == "":  # Java's split drops trailing empty strings
            simple.pop()
        if len(simple) < expected:
            raise UnsupportedNode(self.value)
        if len(simple) == expected:
            return simple
        parts, start = [], 0
        for match in _NODE_DELIM.finditer(self.value):
            if len(parts) == expected - 1:
                break
            parts.append(self.value[start : match.start()])
            start = match.end()
        if len(parts) < expected - 1:
            raise UnsupportedNode(self.value)
        return [*parts, self.value[start:]]

    def has_version(self) -> bool:
        return "#" in self.value

    def dataset(self) -> tuple[str, str]:
        _, namespace, name = self.parts(3)
        return check_namespace(namespace), check_name(name)

    def job(self) -> tuple[str, str]:
        _, namespace, name = self.parts(3)
        return check_namespace(namespace), check_name(name)

    def dataset_field(self) -> tuple[str, str, str]:
        _, namespace, name, field = self.parts(4)
        return check_namespace(namespace), check_name(name), check_name(field)


class UnsupportedNode(RuntimeError):
    """NodeId.parts' UnsupportedOperationException (a 500)."""


def node_id(value: str) -> NodeId | None:
    """NodeId.of for a query parameter; None (Jersey's 404) without a known prefix."""
    return NodeId(value) if _NODE_PREFIX.fullmatch(value) else None
