"""The exit-code contract of `check`, `ci`, `pre-push` and `pre-receive`.

Every process exit in failgate goes through these names; nothing else picks a number.
"""

from __future__ import annotations

ALLOWED = 0  # nothing blocks; warnings may have been printed
HELD = 1  # at least one blocking gate is open
USAGE = 2  # bad arguments (click's own code, kept)
ESCALATED = 3  # a blocking conflict, and no integrity error
INTEGRITY = 4  # the ledger, the history or git could not be trusted to answer
INTERRUPTED = 130  # stopped by Ctrl-C: 128 + SIGINT, as a shell reports it
