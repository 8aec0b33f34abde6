"""What the evidence ref's tree may hold: the files `evidence_path` names, in its folders.

Pure.
"""

from __future__ import annotations

from failgate_hooks.core.evidence import evidence_path

# One evidence path: its parts stand in for those a folder's own path lacks.
_SOME_PATH = tuple(evidence_path("ck1:" + "0" * 64).split("/"))
DEPTH = len(_SOME_PATH)  # how deep evidence files lie: nothing deeper is evidence
