"""Java semantics Marquez's answers depend on: String.hashCode and Lombok hash codes (the order a
java.util.HashSet iterates in, which is the order Jackson writes a Set in), String.compareTo
(UTF-16 code units), and the java.util.UUID conversions Marquez uses for run and version ids."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

_INT_MASK = 0xFFFFFFFF
LOMBOK_PRIME = 59
LOMBOK_NULL = 43


def to_int32(value: int) -> int:
    """``value`` wrapped to a signed 32-bit int, as Java's int arithmetic does."""
    value &= _INT_MASK
    return value - (1 << 32) if value >= 1 << 31 else value


def string_hash(text: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units."""
    units = text.encode("utf-16-be")
    result = 0
    for index in range(0, len(units), 2):
        result = (result * 31 + (units[index] << 8 | units[index + 1])) & _INT_MASK
    return to_int32(result)


def lombok_hash(*field_hashes: int | None) -> int:
    """A Lombok @EqualsAndHashCode over fields whose hashes are given (None: a null field)."""
    result = 1
    for field in field_hashes:
        result = to_int32(result * LOMBOK_PRIME + (LOMBOK_NULL if field is None else field))
    return result


def value_hash(text: str) -> int:
    """Hash of Marquez's one-string value classes (NamespaceName, DatasetName, JobName, ...)."""
    return lombok_hash(string_hash(text))


def dataset_id_hash(namespace: str, name: str) -> int:
    """marquez.common.models.DatasetId.hashCode."""
    return lombok_hash(value_hash(namespace), value_hash(name))


def hash_set_order(items: Iterable[T], hash_of: Callable[[T], int], key: Callable[[T], Hashable]) -> list[T]:
    """The iteration order of a java.util.HashSet (default capacity, load factor 0.75) filled with
    ``items`` in order: by bucket of the spread hash, then by insertion within a bucket."""
    unique: dict[Hashable, T] = {}
    for item in items:
        unique.setdefault(key(item), item)
    capacity = 16
    while len(unique) > capacity * 0.75:
        capacity *= 2

    def bucket(item: T) -> int:
        code = hash_of(item) & _INT_MASK
        return (code ^ (code >> 16)) & (capacity - 1)

    ordered = list(unique.values())  # a bucket keeps its insertion order
    return [item for _, item in sorted(enumerate(ordered), key=lambda pair: (bucket(pair[1]), pair[0]))]


def dataset_id_set(ids: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """A HashSet<DatasetId> of (namespace, name) pairs, in Java's iteration order."""
    return hash_set_order(ids, lambda pair: dataset_id_hash(*pair), lambda pair: pair)


def java_sort_key(text: str) -> bytes:
    """A key ordering strings as String.compareTo does (UTF-16 code units)."""
    return text.encode("utf-16-be")


def name_uuid_from_bytes(data: bytes) -> uuid.UUID:
    """java.util.UUID.nameUUIDFromBytes: an MD5, version 3 UUID."""
    digest = bytearray(hashlib.md5(data).digest())  # noqa: S324 - Java's algorithm, not security
    digest[6] = (digest[6] & 0x0F) | 0x30
    digest[8] = (digest[8] & 0x3F) | 0x80
    return uuid.UUID(bytes=bytes(digest))


_HEX = re.compile(r"[0-9a-fA-F]+")
NAMESPACE_URL_UUID = uuid.UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")


def name_based_uuid(*parts: str) -> uuid.UUID:
    """Marquez's Utils.toNameBasedUuid: the URL namespace UUID's bytes, then the dotted parts."""
    return name_uuid_from_bytes(NAMESPACE_URL_UUID.bytes + ".".join(parts).encode())


def java_uuid(text: str) -> uuid.UUID:
    """java.util.UUID.fromString, which takes up to 36 characters in five dash-separated hex
    groups of any width (raises ValueError otherwise)."""
    parts = text.split("-")
    if len(text) > 36 or len(parts) != 5 or any(not part for part in parts):
        raise ValueError(f"Invalid UUID string: {text}")
    if not all(_HEX.fullmatch(part) for part in parts):
        raise ValueError(f"Invalid UUID string: {text}")
    numbers = [int(part, 16) for part in parts]
    widths = (32, 16, 16, 16, 48)
    if any(number >> width for number, width in zip(numbers, widths, strict=True)):
        raise ValueError(f"Invalid UUID string: {text}")
    value = 0
    for number, width in zip(numbers, widths, strict=True):
        value = value << width | number
    return uuid.UUID(int=value)


def sorted_java(texts: Sequence[str]) -> list[str]:
    """Strings sorted as a Java TreeSet/ImmutableSortedSet of String sorts them."""
    return sorted(texts, key=java_sort_key)
