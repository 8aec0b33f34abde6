"""The ledger in the working tree: the one place failgate touches it.

New event files are written here, atomically and never over an existing one,
and `record` reads the entity's files that are not committed yet. Nothing
here decides a gate: gates read committed objects (union.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Mapping

from failgate_hooks.core.errors import LedgerError
from failgate_hooks.core.events import Event, entity_folder, event_to_toml, is_ledger_file


class EventFileExists(LedgerError):
    """The event file's name is taken: a new id may be drawn."""


def _entity_dir(root: str, ledger_dir: str, entity_key: str) -> str:
    """The entity's folder in the work tree, refused when a part of its way is a link or
    a file: git holds a link as a link, so an event written through one would not be in
    the ledger at all, and a failure recorded would gate nothing."""
    parts = [*ledger_dir.strip("/").split("/"), *entity_folder(entity_key).split("/")]
    path = root
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            what = "a symbolic link" if os.path.islink(path) else "not a folder"
            rel = "/".join(parts[: i + 1])
            raise LedgerError(
                f"{rel} is {what}: an event of {entity_key} cannot be written there, "
                "since git would not hold it in the ledger",
                hint=f"replace {rel} with a plain folder (git rm it), then record again",
            )
    return path


def write_event_file(root: str, ledger_dir: str, event: Event, temp_dir: str | None = None) -> str:
    """Write a new event file atomically and never over an existing one; return its path.

    The bytes go to a temporary file first, then `os.link` gives them their final
    name, which fails if that name exists. The temporary is in `temp_dir` (failgate's
    folder in the git directory), where a write killed before the link leaves nothing
    `git add ledger/` would commit. Where no link reaches the work tree from there
    (another file system or mount) it is a dot-file in the entity's folder, which no
    reader takes for an event.
    """
    folder = _entity_dir(root, ledger_dir, event.entity_key)
    os.makedirs(folder, exist_ok=True)
    _entity_dir(root, ledger_dir, event.entity_key)  # nothing became a link meanwhile
    final = os.path.join(folder, f"{event.id}.toml")
    data = event_to_toml(event)
    # Apart from every other writer's, in another PID namespace sharing this git dir too.
    name = f"{event.id}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    if temp_dir is not None:
        try:
            os.makedirs(temp_dir, exist_ok=True)
        except OSError:
            temp_dir = None  # a read-only git directory: the dot-file in the folder
    if temp_dir is not None and _link_new(data, os.path.join(temp_dir, name), final):
        return final
    _link_new(data, os.path.join(folder, f".{name}"), final)
    return final


def _link_new(data: bytes, temp: str, final: str) -> bool:
    """`data` written to `temp`, then linked as `final`; False when the link would cross
    file systems or mounts (EXDEV), and nothing is written. `temp` is gone either way,
    but one this call did not make (FileExistsError) is another writer's: left alone."""
    handle = open(temp, "xb")  # noqa: SIM115 - closed below, before the link
    try:
        with handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, final)
        except FileExistsError:
            raise EventFileExists(
                f"{final} already exists; an event file is never overwritten"
            ) from None
        except OSError as error:
            if error.errno == errno.EXDEV:
                return False
            raise
    finally:
        # Once linked, the event has landed whatever the unlink says: a failure here
        # must not make the caller write it again under another id.
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return True


def working_tree_files(
    root: str, ledger_dir: str, entity_key: str, max_bytes: int
) -> Mapping[str, bytes]:
    """The entity's event files in the working tree (not child entities), by repo path,
    each read only up to `max_bytes` + 1 bytes: a longer one is known to be too large
    without being held."""
    rel_folder = f"{ledger_dir}/{entity_folder(entity_key)}"
    folder = _entity_dir(root, ledger_dir, entity_key)
    out: dict[str, bytes] = {}
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return out
    for name in names:
        full = os.path.join(folder, name)
        if not is_ledger_file(name) or not os.path.isfile(full):
            continue
        with open(full, "rb") as handle:
            out[f"{rel_folder}/{name}"] = handle.read(max_bytes + 1)
    return out
