"""Verifier for failgate's own gate failgate:events:pinned-path-in-dot-git.

The bug: events.is_safe_relative_path refused `.git/...` only as the first
component, so a pinned verifier file or input such as `vendor/.git/hooks/x`
(a nested repository's git folder) passed validation. git never tracks a
path with a `.git` component at any depth, in any case, so such a path can
only ever point at something that is not content.

Runs in a clean checkout of the commit under test and imports failgate from
it (stdlib only: the events module needs nothing else). Exit 0: refused as it must
be; 1: accepted; 125: no verdict (the checkout's failgate cannot be imported, or
what was imported is not the checkout's).
"""

import os
import sys

CHECKOUT = os.getcwd()
# The module as this commit lays it out: core/events.py since the package had layers,
# events.py before. Asked of the checkout, never of an import that fails: for a module
# the checkout's package lacks, an editable install's finder (pip install -e) answers
# with the work tree's copy, today's code, which a replay of an old commit must not run.
LAYERED = os.path.isfile(os.path.join(CHECKOUT, "failgate_hooks", "core", "events.py"))
sys.path.insert(0, CHECKOUT)
try:
    if LAYERED:
        from failgate_hooks.core import events
    else:
        from failgate_hooks import events
except Exception as exc:  # the commit under test predates or breaks the module
    print(f"cannot import failgate's events module from the checkout: {exc}")
    sys.exit(125)
if not os.path.realpath(events.__file__).startswith(os.path.realpath(CHECKOUT) + os.sep):
    print(f"imported failgate's events module from {events.__file__}, not from the checkout")
    sys.exit(125)
is_safe_relative_path = events.is_safe_relative_path

INSIDE_A_GIT_FOLDER = [
    "vendor/.git/hooks/pre-push",
    "sub/module/.GIT/config",
    "x/.git",
    ".git/config",
]
accepted = [path for path in INSIDE_A_GIT_FOLDER if is_safe_relative_path(path)]
if accepted:
    print("accepted paths inside a .git folder: " + ", ".join(accepted))
    sys.exit(1)
print(f"all {len(INSIDE_A_GIT_FOLDER)} paths inside a .git folder are refused")
