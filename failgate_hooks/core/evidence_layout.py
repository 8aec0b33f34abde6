"""What the evidence ref's tree may hold: the files `evidence_path` names, in its folders.

Pure. Evidence is append-only, so an entry the server lets in stays for good:
only what failgate writes gets in (a plain file where `evidence_path` puts one,
inside the folders that lead there), never a link, a submodule, an executable
or a name no lookup would ever read.
"""

from __future__ import annotations

from failgate_hooks.core.evidence import EvidenceFormatError, evidence_path

# Modes as git reads them (git/trees.py's as_git_reads); files as git/evidence.py writes them.
FOLDER_MODE = "040000"
FILE_MODE = "100644"
_OTHER_KINDS = {
    "100755": "an executable file",
    "120000": "a symbolic link",
    "160000": "a submodule",
}
# One evidence path: its parts stand in for those a folder's own path lacks.
_SOME_PATH = tuple(evidence_path("ck1:" + "0" * 64).split("/"))
DEPTH = len(_SOME_PATH)  # how deep evidence files lie: nothing deeper is evidence
EXAMPLE_PATH = "/".join((*_SOME_PATH[:-1], f"<{len(_SOME_PATH[-1])} hex digits>"))


def layout_problem(path: str, mode: str) -> str | None:
    """Why the entry at `path`, of `mode`, has no place in the evidence ref's tree; None
    when it has: a folder some evidence file lies in, or a plain file evidence_path names."""
    parts = tuple(path.split("/"))
    if mode == FOLDER_MODE:
        if len(parts) < DEPTH and _names_evidence(parts + _SOME_PATH[len(parts) :]):
            return None
        return "a folder where no evidence folder belongs"
    if mode != FILE_MODE:
        return _OTHER_KINDS.get(mode, f"an entry of mode {mode}")
    if not _names_evidence(parts):
        return "a file no content key names"
    return None


def _names_evidence(parts: tuple[str, ...]) -> bool:
    """Whether `parts` is the path evidence_path gives some key (the path read back)."""
    version, *rest = parts
    try:
        return evidence_path(f"{version}:{''.join(rest)}") == "/".join(parts)
    except EvidenceFormatError:
        return False
