"""Verifier for failgate's own gate failgate:events:pinned-path-in-dot-git.

The bug: events.is_safe_relative_path refused `.git/...` only as the first
component, so a pinned verifier file or input such as `vendor/.git/hooks/x`
(a nested repository's git folder) passed validation. git never tracks a
path with a `.git` component at any depth, in any case, so such a path can
only ever point at something that is not content.

Runs in a clean checkout of the commit under test and imports failgate from
it (stdlib only: the events module needs nothing else). Exit 0: refused as it must
be; 1: accepted; 125: no verdict (the checkout's failgate cannot be imported).
"""

import os
import sys

sys.path.insert(0, os.getcwd())
try:
    try:
        from failgate_hooks.core.events import is_safe_relative_path
    except ModuleNotFoundError:  # a commit from before the package had layers
        from failgate_hooks.events import is_safe_relative_path
except Exception as exc:  # the commit under test predates or breaks the module
    print(f"cannot import failgate's events module from the checkout: {exc}")
    sys.exit(125)

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
