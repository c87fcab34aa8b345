"""The one error type of emr-lineage: a problem the user can fix, with a message that says so.

Every module raises a subclass of :class:`EmrLineageError` for bad input or an unusable
environment; the CLI prints it as one ``error: ...`` line and exits with ``exit_code``
(see docs/cli.md). Anything else escaping a command is a bug.
"""

from __future__ import annotations

import html
import json
import re

# Exit codes of every command (docs/cli.md).
EXIT_OK = 0
EXIT_CHECK_FAILED = 1  # the command ran its check and found a problem
EXIT_CANNOT_RUN = 2  # it could not do its job: bad option, config, input, server, credentials
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM, after cleanup
EXIT_OUTPUT_CLOSED = 141  # what stdout was piped to stopped reading (head, a pager): a shell's status for SIGPIPE


class EmrLineageError(Exception):
    """A problem the user can fix: what is wrong, where, and the fix when known (one line)."""

    exit_code = EXIT_CANNOT_RUN


_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}


def json_type(value: object) -> str:
    """What a parsed JSON value is, in JSON's words (``null``, not Python's ``NoneType``): ``object``,
    ``array``, ``string``, ``number``, ``boolean`` or ``null``; messages say ``a JSON {json_type(value)}``."""
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def network_reason(exc: BaseException) -> str:
    """Why a request got no answer, in the system's words (``Connection refused``, ``timed out``, ``Name or
    service not known``), not Python's (``URLError: <urlopen error [Errno 111] Connection refused>``):
    urllib's wrapped reason, an OS error's text, else the exception's own message."""
    while isinstance(getattr(exc, "reason", None), BaseException):  # URLError wraps the socket's error
        exc = exc.reason  # type: ignore[attr-defined]
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason.strip():
        return one_line(reason)
    if isinstance(exc, OSError) and exc.strerror:
        return one_line(exc.strerror)
    return one_line(str(exc).strip("'\"")) or "no answer"


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


_TAG = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]*>", re.IGNORECASE | re.DOTALL)


def readable(text: str, limit: int = 300) -> str:
    """A server's answer as one line: an HTML page (Jetty's and Jersey's error pages are) without its tags
    and with its entities read, whitespace folded, at most ``limit`` characters."""
    if text.lstrip().startswith("<"):  # a page, not a message that holds a < or >
        text = html.unescape(_TAG.sub(" ", text))
    return one_line(text, limit)


def reason_of(body: bytes, limit: int = 300) -> str:
    """A server's reason for an error answer, on one line (:func:`readable`): the ``message`` (or ``error``,
    ``errors``) of its JSON error body (Dropwizard's ``{"code": ..., "message": ...}``), else the body's
    text (an HTML page's, without its tags); "" for an empty body."""
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        found = parsed.get("message") or parsed.get("error") or parsed.get("errors")
        text = found if isinstance(found, str) else json.dumps(found) if found else text
    return readable(text, limit)
