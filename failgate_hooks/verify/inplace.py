"""Whether the user's work tree is commit C, byte for byte: the proof `workdir = "inplace"` needs.

`git status` says a tree is clean after undoing the conversions git makes on
checkout (`.gitattributes`' text, eol, crlf, working-tree-encoding, ident and
filter, `core.autocrlf`), and trusts a file whose timestamps match the index: a
file written as UTF-16, with CRLF or an expanded $Id$, now or under an earlier
checkout's attributes, is "clean" though a verifier reading it reads other bytes
than its blob. So every tracked file is hashed as it lies on disk, no filter
applied, and compared with the blob the index (which status proved is C's)
names. A failgate checkout is immune: it turns every conversion off
(git/checkoutgit.py).

Nor does status prove what kind of file each path is. Under core.fileMode=false
it ignores the executable bit, under core.symlinks=false it takes a regular
file for a link, and a link's target it trusts to the timestamps as it does a
file's bytes. So each entry is looked at with lstat: a link must be a link
whose target is its blob, a file a regular file whose executable bit is its
mode's.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import NamedTuple

from failgate_hooks.core.errors import GitError
from failgate_hooks.core.ids import blob_id, object_format_of, short_id
from failgate_hooks.core.sanitize import clean_line
from failgate_hooks.git.checkoutgit import CONVERSION_ATTRIBUTES
from failgate_hooks.git.conversion import check_attr, hash_files
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.pins import Pin, differs_from

_REGULAR_MODES = ("100644", "100755")  # a link or a submodule is never converted
_EXECUTABLE_MODE = "100755"
_LINK_MODE = "120000"
_SUBMODULE_MODE = "160000"
# core.symlinks values under which git checks a link out as a file holding its target.
_FALSE = ("false", "no", "off", "0")
# core.autocrlf values that convert nothing; any other (true, input, a typo) may.
_AUTOCRLF_OFF = ("", "false", "no", "off", "0")
_SHOWN_PATH_CHARS = 200


class IndexEntry(NamedTuple):
    """One line of `git ls-files -s -v`: its tag (H: status watches it), mode, blob, path."""

    tag: str
    mode: str
    oid: str
    path: str


def inplace_refusal(repo: GitRepo, commit: str, pins: Sequence[Pin]) -> str | None:
    """Why the user's work tree cannot stand for C, or None when it can."""
    if repo.working_dir is None:
        return "the repository is bare"
    if repo.try_resolve_commit("HEAD") != commit:
        return f"HEAD is not {short_id(commit)}"
    # Every flag is explicit: a user's status.showUntrackedFiles=no or a submodule's
    # ignore setting must not hide what could feed the verifier.
    # An fsmonitor daemon's word is not the work tree: status looks at every file itself.
    status = repo.run(
        "-c",
        "core.fsmonitor=false",
        "--no-optional-locks",
        "status",
        "--porcelain",
        "--ignored",
        "--untracked-files=normal",
        "--ignore-submodules=none",
    )
    if status.strip():
        return "the work tree has changes, untracked or ignored files"
    entries = index_entries(repo.run("ls-files", "-s", "-v", "-z", strip=False))
    # Status never looks at a file the index marks assume-unchanged or skip-worktree (a
    # sparse checkout marks each one it leaves out): what is there may be anything.
    hidden = next((entry.path for entry in entries if entry.tag != "H"), None)
    if hidden is not None:
        return (
            f"the index marks {clean_line(hidden, _SHOWN_PATH_CHARS)} assume-unchanged or "
            "skip-worktree, so git status cannot vouch for it"
        )
    # A submodule's files are no blob of C: a checkout holds its folder empty, and status
    # does not look inside it for files git ignores there.
    submodule = next((entry.path for entry in entries if entry.mode == _SUBMODULE_MODE), None)
    if submodule is not None:
        return (
            f"{clean_line(submodule, _SHOWN_PATH_CHARS)} is a submodule: its files are not "
            "the commit's, and a checkout holds it empty"
        )
    unlike = unlike_its_blob(repo, entries)
    if unlike is not None:
        return unlike
    # Writing a pinned file into the user's own tree is never an option.
    return differs_from(repo, commit, pins)


def index_entries(listing: str) -> list[IndexEntry]:
    """The entries of `git ls-files -s -v -z` output ("H 100644 <oid> 0\\t<path>")."""
    entries = []
    for item in listing.split("\0"):
        meta, tab, path = item.partition("\t")
        fields = meta.split(" ")
        if tab and len(fields) == 4:
            entries.append(IndexEntry(fields[0], fields[1], fields[2], path))
    return entries


def unlike_its_blob(repo: GitRepo, entries: Sequence[IndexEntry]) -> str | None:
    """Why a tracked file's bytes on disk may not be its blob, or None when each one is.

    Every file is hashed as it lies on disk, no filter applied: status trusts a file
    whose timestamps match the index, so one written under a conversion an earlier
    checkout had in force (a .gitattributes since gone) looks clean too. Each entry is
    first proved to be the kind of file its mode says (`_unlike_its_mode`), a link's
    target its blob, in the same walk: hash-object would follow a link."""
    assert repo.working_dir is not None  # inplace_refusal refuses a bare repository
    root = os.fsencode(repo.working_dir)
    files = []
    for entry in entries:
        unlike = _unlike_its_mode(repo, root, entry)
        if unlike is not None:
            return unlike
        if entry.mode in _REGULAR_MODES:
            files.append(entry)
    if not files:
        return None
    try:
        hashed = hash_files(repo, [entry.path for entry in files], filters=False)
    except GitError as exc:  # a file gone or unreadable: nothing proves the tree is C
        return f"the work tree's files cannot be hashed as they are ({clean_line(str(exc), 300)})"
    for entry, oid in zip(files, hashed, strict=True):
        if oid != entry.oid:
            return _unlike(repo, entry.path)
    return None


def _unlike_its_mode(repo: GitRepo, root: bytes, entry: IndexEntry) -> str | None:
    """Why what the work tree holds at `entry.path` is not the kind of file its mode
    says (a link whose target is its blob, a regular file of its executable bit), or
    None when it is. The bit is git's own: the owner's execute bit of a regular file."""
    if entry.mode != _LINK_MODE and entry.mode not in _REGULAR_MODES:
        return _not_the_commit(
            entry.path, f"has mode {clean_line(entry.mode, 20)} in the index, which failgate "
            "cannot compare with the work tree", "use the default workdir",
        )  # fmt: skip
    full = os.path.join(root, entry.path.encode("utf-8", "surrogateescape"))
    try:
        mode = os.lstat(full).st_mode
        target = os.readlink(full) if stat.S_ISLNK(mode) else None
    except OSError as exc:
        why = clean_line(exc.strerror or type(exc).__name__, 100)
        return _not_the_commit(entry.path, f"cannot be read ({why})", "use the default workdir")
    wanted = stat.S_ISLNK if entry.mode == _LINK_MODE else stat.S_ISREG
    if not wanted(mode):
        committed = _kind(stat.S_IFLNK if entry.mode == _LINK_MODE else stat.S_IFREG)
        because = ""
        if entry.mode == _LINK_MODE and stat.S_ISREG(mode) and _links_as_files(repo):
            because = " (core.symlinks=false in the git config checks links out as files)"
        return _not_the_commit(
            entry.path, f"is {committed} in the commit and {_kind(mode)} in the work tree{because}",
            "use the default workdir, or remove it and check it out again",
        )  # fmt: skip
    if target is not None:
        if blob_id(target, object_format_of(entry.oid)) != entry.oid:
            return _not_the_commit(
                entry.path, "is a symbolic link to another target than the commit's, though "
                "git status calls it clean (retargeted with its timestamps kept)",
                "use the default workdir, or remove it and check it out again",
            )  # fmt: skip
        return None
    executable = bool(mode & stat.S_IXUSR)
    if executable != (entry.mode == _EXECUTABLE_MODE):
        has, lacks, fix = ("is", "not", "chmod -x") if executable else ("is not", "is", "chmod +x")
        return _not_the_commit(
            entry.path, f"{has} executable in the work tree and {lacks} in the commit (git "
            "status does not look at the bit under core.fileMode=false)",
            f"use the default workdir, or {fix} it",
        )  # fmt: skip
    return None


def _kind(mode: int) -> str:
    """What a file of `mode` (lstat's) is, as a reason names it."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a folder" if stat.S_ISDIR(mode) else "neither a file nor a link"


def _links_as_files(repo: GitRepo) -> bool:
    """Whether core.symlinks is false here: only the message is at stake."""
    return (repo.config_get("core.symlinks") or "").strip().lower() in _FALSE


def _not_the_commit(path: str, why: str, remedy: str) -> str:
    """The reason `path`, which `why`, keeps the work tree from standing for C."""
    return f"{clean_line(path, _SHOWN_PATH_CHARS)} {why}: the work tree is not the commit; {remedy}"


def _unlike(repo: GitRepo, path: str) -> str:
    """What to tell of `path`, whose bytes on disk are not its blob."""
    shown = clean_line(path, _SHOWN_PATH_CHARS)
    converter = _converter(repo, path)
    if converter is None:
        why = (
            "holds other bytes than its blob though git status calls it clean (written "
            "under an earlier .gitattributes, or edited with its timestamps kept)"
        )
    else:
        why = f"is converted by {converter}"
    return (
        f"{shown} {why}: the work tree is not the commit's bytes; "
        "use the default workdir, or check the file out again"
    )


def _converter(repo: GitRepo, path: str) -> str | None:
    """The conversion git applies to `path` ("working-tree-encoding=UTF-16 in the
    attributes", "core.autocrlf=true"), or None. check-attr reads each .gitattributes,
    info/attributes and core.attributesFile as checkout and status do."""
    try:
        found = check_attr(repo, [path], CONVERSION_ATTRIBUTES)
    except GitError:  # only the message is at stake: it says the bytes differ all the same
        return None
    for attribute in found:
        if attribute.converts:
            name, value = attribute.name, attribute.value
            shown = name if value == "set" else f"{name}={clean_line(value, 80)}"
            return f"{shown} in the attributes"
    autocrlf = (repo.config_get("core.autocrlf") or "").strip().lower()
    if autocrlf not in _AUTOCRLF_OFF:
        return f"core.autocrlf={clean_line(autocrlf, 20)} in the git config"
    return None
