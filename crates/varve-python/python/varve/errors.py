"""Varve's exceptions.

Every error the engine raises is a :class:`Error` with a stable ``code``, a ``hint`` saying what
to do, and ``retryable`` telling whether the same call may succeed when repeated.
"""

from __future__ import annotations

import builtins
from typing import Dict, Optional, Type

__all__ = [
    "Error",
    "NotFoundError",
    "AlreadyExistsError",
    "InvalidInputError",
    "SchemaMismatchError",
    "ConflictError",
    "StorageError",
    "LimitExceededError",
    "TimeoutError",
    "CorruptionError",
    "UnsupportedError",
    "InternalError",
]


class Error(Exception):
    """A Varve error.

    Attributes:
        code: a stable kind, e.g. ``"not_found"``, ``"invalid_input"``.
        message: what went wrong, one line (also ``str(error)``).
        hint: what the caller can do about it.
        retryable: whether repeating the same call may succeed.
    """

    code: str = "internal"
    default_hint: str = "This looks like a bug in Varve; please report it with the message."

    def __init__(self, message: str, *, hint: Optional[str] = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint
        self.retryable = retryable


class NotFoundError(Error):
    """A table, namespace, snapshot, column or file does not exist."""

    code = "not_found"
    default_hint = "Check the name; lake.tables() lists tables and table.history() lists snapshots."


class AlreadyExistsError(Error):
    """A table to be created exists already."""

    code = "already_exists"
    default_hint = "Use lake.table(name) to open it, or drop it first."


class InvalidInputError(Error):
    """Input that cannot be accepted: a bad value (with its column and row), option, URL or SQL."""

    code = "invalid_input"
    default_hint = "Fix the value, option or statement named in the message."


class SchemaMismatchError(InvalidInputError):
    """Data whose columns cannot be stored in the table's columns."""

    code = "schema_mismatch"
    default_hint = "Cast the column to the table's type, or rename it to add a new column."


class ConflictError(Error):
    """Other writers won every commit attempt; the whole append may be retried."""

    code = "conflict"
    default_hint = "Retry the append (give it a batch_id so that a retry cannot load data twice)."


class StorageError(Error):
    """The object store failed (network, permissions, missing bucket)."""

    code = "storage"
    default_hint = "Check the lake URL, credentials and network."


class LimitExceededError(Error):
    """A resource limit was reached: max_rows, or memory_limit even after spilling."""

    code = "limit_exceeded"
    default_hint = "Raise the limit, or narrow the query with a filter, a LIMIT or fewer columns."


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001 - deliberately also the builtin
    """A query ran past its timeout and was cancelled. Also a builtin ``TimeoutError``."""

    code = "timeout"
    default_hint = "Raise timeout=, or narrow the query by time range or columns."


class CorruptionError(Error):
    """Stored metadata or data cannot be decoded."""

    code = "corruption"
    default_hint = "The table's files were changed outside Varve; check the object store."


class UnsupportedError(Error):
    """A valid table uses a feature Varve does not implement yet (for example delete files
    written by another engine); nothing was read or changed."""

    code = "unsupported"


class InternalError(Error):
    """An unexpected engine failure."""

    code = "internal"


_BY_CODE: Dict[str, Type[Error]] = {
    c.code: c
    for c in (
        NotFoundError,
        AlreadyExistsError,
        InvalidInputError,
        SchemaMismatchError,
        ConflictError,
        StorageError,
        LimitExceededError,
        TimeoutError,
        CorruptionError,
        UnsupportedError,
        InternalError,
    )
}


def from_native(code: str, message: str, retryable: bool) -> Error:
    """The :class:`Error` subclass for an engine error code."""
    cls = _BY_CODE.get(code, InternalError)
    return cls(message, retryable=retryable)
