"""failgate's one exception family; the CLI turns each into a message and an exit code."""

from __future__ import annotations

from failgate_hooks.core import exitcodes


class FailgateError(Exception):
    """An expected failure: printed as a message, never as a traceback."""

    exit_code = exitcodes.INTEGRITY

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(FailgateError):
    """The arguments or the configuration cannot be acted on."""

    exit_code = exitcodes.USAGE


class GitError(FailgateError):
    """git could not answer: a missing repository, revision or object. Fails closed."""


class LedgerError(FailgateError):
    """The ledger cannot be read or written as the contract requires."""


class TrustError(FailgateError):
    """The trust store or the cache cannot be read or written."""
