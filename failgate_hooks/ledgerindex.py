"""A summary of the ledger at one tree, kept by the tree's id (issue 11).

Deciding a push needs every entity, but most entities do not apply to it: a
gate for `deploy` does not apply to a `push`, nor one for `release/*` to main.
For those, the decision needs the scopes applicability judges (gates.ruled_out),
the title, status and remaining event ids, not the events. A tree id names the
ledger's bytes forever, so those facts, once worked out, hold for every later run:
they are kept under `<git-common-dir>/failgate/index/`, one file per ledger
tree, and a run reads in full only the entities it cannot settle from them.

An entity is settled from its summary only when nothing about the union of
revisions could make it differ from what the summary says:

- every revision's ledger holds the entity with the same files (the same
  listing, blob ids included), so the union holds exactly those files;
- a protected revision holds them, so no relaxation of it is pending or listed
  (authority changes nothing);
- each tree's ledger is clean on its own (no file outside an entity folder, no
  duplicate id), and no entity read in full shares an event id with another.

Anything else (an entity that changed between revisions, a new one, one that
may apply, an unclean ledger) is read in full, exactly as
`read_union` reads it. The summary file is data another process can write: it
carries a format version and a checksum, is type-checked as it is decoded,
and a bad one is rebuilt. Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from typing import Any, NamedTuple

from failgate_hooks.cachefile import sources_digest, write_whole
from failgate_hooks.collector import no_cycle_collection
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.events import AppliesTo, Event, Problem
from failgate_hooks.core.gates import judged_scopes
from failgate_hooks.core.resolve import EntityState, Resolution, resolve_entity
from failgate_hooks.core.validate import parse_event
from failgate_hooks.forked import Child, both_cores
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.ledger.union import (
    REGULAR,
    Ledger,
    Revision,
    at_commit,
    classify_path,
    entity_of,
    not_a_file,
    owned,
    parse_blob,
    read_union,
    union_of,
)

FORMAT = 2
MAGIC = b"failgate-ledger-index"
KEEP = 16  # index files kept: one per ledger tree seen lately
FORK_FILES = 2_000  # fewer files are read sooner by one process than split between two
SHARES = 16  # what two processes share out: small enough to end together, large to stream


class Details(NamedTuple):
    """The columns a decision reads only to show settled entities (JSON, CI, export)."""

    titles: list[str | None]
    statuses: list[str | None]
    event_ids: list[list[str]]  # the remaining events, in resolution order


class TreeIndex:
    """Every entity of one ledger tree, in columns: one row per entity, in key order.

    What every decision reads (keys, a digest of each entity's files, its scopes)
    is decoded up front; an entity's files when it is read in full; the rest
    (Details) only when settled entities are shown one by one."""

    def __init__(
        self,
        clean: bool,
        keys: list[str],
        compare: Compare | Callable[[], Compare],
        scope_of: list[int],
        scopes: list[tuple[EntityState, ...]],
        details: Details | Callable[[], Details],
        files: Callable[[int], list[TreeEntry]],
        lines: list[bytes] | None = None,
    ) -> None:
        self.clean = clean  # no problem that no entity owns (outside-entity, duplicate ids)
        self.keys = keys
        # what comparing trees reads: a digest of each entity's files (equal digests,
        # equal files), and the names of its files (event ids)
        self._compare = compare
        self.scope_of = scope_of  # which of `scopes` is the entity's
        # distinct scope sets: the triggers and applies_to of each state `assess` judges
        # (the heads of a conflict); thousands of entities share a handful
        self.scopes = scopes
        self._details = details
        # each entity's own entries, as the listing gives them
        self.files = files
        # and each entity's line in the index file, when built here
        self.lines = lines

    def _compared(self) -> Compare:
        """Read only to compare trees: one tree (the usual push) needs none."""
        if not isinstance(self._compare, tuple):
            self._compare = self._compare()
        return self._compare

    @property
    def digests(self) -> list[str]:
        return self._compared()[0]

    @property
    def ids(self) -> list[list[str]]:
        return self._compared()[1]

    @property
    def details(self) -> Details:
        if not isinstance(self._details, Details):
            self._details = self._details()
        return self._details

    def rows(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.keys)}


class Settled(NamedTuple):
    """Entities the action rules out, as their summaries say: phase 1 needs no more."""

    tree: TreeIndex
    rows: list[int]  # the entities' rows in `tree`
    reasons: list[str | None]  # why, for each scope set of `tree`

    def entities(self) -> Iterator[tuple[str, str, str | None, str | None, tuple[str, ...]]]:
        """Key, reason, title, status and remaining event ids of each settled entity."""
        index, details = self.tree, self.tree.details
        for row in self.rows:
            reason = self.reasons[index.scope_of[row]]
            assert reason is not None
            yield (
                index.keys[row],
                reason,
                details.titles[row],
                details.statuses[row],
                tuple(details.event_ids[row]),
            )


class LedgerView(NamedTuple):
    """The union ledger, split: entities read in full, and entities settled by summary."""

    ledger: Ledger  # every entity not settled, with provenance, as read_union gives it
    settled: Settled | None


# --------------------------------------------------------------------------- the view


def ledger_view(
    repo: GitRepo,
    revisions: Sequence[Revision],
    ledger_dir: str,
    ruled_out: Callable[[Sequence[EntityState]], str | None],
) -> LedgerView:
    """The ledger for one decision, reading in full only what it must.

    `ruled_out` says why no scope of a set applies to the action, or None when
    one may (gates.ruled_out for the commit and context at hand)."""
    by_commit: dict[str, list[Revision]] = {}
    for rev in revisions:
        by_commit.setdefault(rev.commit, []).append(rev)
    # Revisions whose ledger is one tree share one index (the usual push changes code).
    found: dict[str, str] = {}  # ledger tree -> a commit that holds it
    held: list[tuple[list[Revision], str]] = []  # each commit's revisions, as read_union
    for commit, revs in by_commit.items():
        entry = repo.tree_entry(commit, ledger_dir.strip("/"))
        if entry is None:
            continue  # no ledger at that revision: it adds nothing to the union
        if entry.type != "tree":
            return LedgerView(read_union(repo, revisions, ledger_dir), None)
        found.setdefault(entry.oid, commit)
        held.append((revs, entry.oid))
    # Indexes already kept first: one built next is built from them (what differs only).
    trees: dict[str, TreeIndex] = {}
    for tree in sorted(found, key=lambda t: not _kept(repo, t, ledger_dir)):
        trees[tree] = tree_index(repo, found[tree], tree, ledger_dir)
    at = [(revs, trees[tree]) for revs, tree in held]
    indexes = [trees[tree] for tree in found]
    if not all(index.clean for index in indexes):
        return LedgerView(read_union(repo, revisions, ledger_dir), None)

    changed = _changed(indexes)
    settled = None
    if indexes and any(rev.protected for revs, _ in at for rev in revs):
        # every unchanged entity's events are then in a protected revision: no
        # relaxation of it is pending or to be listed, and its summary decides it
        first = indexes[0]
        # Asked only for the scope sets of entities the same at every revision: what
        # the union holds for any other is another scope, which assess judges (and a
        # question git cannot answer, e.g. a since beyond a shallow clone, must come
        # from the same entities as without the index).
        reasons: list[str | None] = [None] * len(first.scopes)
        asked: set[int] = set()
        rows = []
        for row, scope in enumerate(first.scope_of):
            if first.keys[row] in changed:
                continue
            if scope not in asked:
                asked.add(scope)
                reasons[scope] = ruled_out(first.scopes[scope])
            if reasons[scope] is not None:
                rows.append(row)
        settled = Settled(first, rows, reasons)
    if changed and _shares_an_id(indexes):
        return LedgerView(read_union(repo, revisions, ledger_dir), None)
    # The rest is read as read_union reads it: commit by commit, each in listing order.
    listing: dict[int, list[TreeEntry]] = {}  # by index: commits sharing a tree share it
    done = {settled.tree.keys[row] for row in settled.rows} if settled else set()
    for index in indexes:
        rows = [row for row, key in enumerate(index.keys) if key not in done]
        entries = [e for row in rows for e in index.files(row)]
        listing[id(index)] = sorted(entries, key=_git_order)
    listed = [(revs, listing[id(index)]) for revs, index in at]
    return LedgerView(union_of(repo, revisions, ledger_dir, listed), settled)


def _git_order(entry: TreeEntry) -> bytes:
    """git lists a tree's files in the byte order of their paths."""
    return entry.path.encode("utf-8", "surrogateescape")


def _changed(indexes: Sequence[TreeIndex]) -> set[str]:
    """Entities not the same at every revision: some tree lists other files, or none."""
    if len(indexes) < 2:
        return set()
    rows = [index.rows() for index in indexes]
    found: set[str] = set()
    for key in {key for index in indexes for key in index.keys}:
        listings = {
            index.digests[r[key]] if key in r else None
            for index, r in zip(indexes, rows, strict=True)
        }
        if len(listings) > 1:
            found.add(key)
    return found


def _shares_an_id(indexes: Sequence[TreeIndex]) -> bool:
    """Whether two entities hold a file of the same name (an event id) in any trees.

    Within one clean tree no id is held twice; across trees only an entity that
    differs between them can bring one, so this is asked only when one does.
    The whole union then says which and where."""
    owner: dict[str, str] = {}
    for index in indexes:
        for key, stems in zip(index.keys, index.ids, strict=True):
            for stem in stems:
                if owner.setdefault(stem, key) != key:
                    return True
    return False


# --------------------------------------------------------------------------- one tree

_loaded: dict[tuple[str, str], TreeIndex] = {}


def _kept(repo: GitRepo, tree: str, ledger_dir: str) -> bool:
    if (tree, ledger_dir) in _loaded:
        return True
    path = _index_path(repo, tree, ledger_dir)
    return path is not None and os.path.exists(path)


def tree_index(repo: GitRepo, commit: str, tree: str, ledger_dir: str) -> TreeIndex:
    """The index of the ledger tree `tree` (the ledger folder of `commit`).

    Read from disk; else built, from another index this process holds when there
    is one (only the entities whose files differ are read: a push that records an
    event), else from every event."""
    key = (tree, ledger_dir)
    if key not in _loaded:
        path = _index_path(repo, tree, ledger_dir)

        def rebuilt() -> TreeIndex:
            # for a file whose summary read well but whose other parts do not
            return build_index(repo, commit, ledger_dir)

        found = _read(path, ledger_dir, rebuilt) if path is not None else None
        if found is None:
            bases = [index for (_, d), index in _loaded.items() if d == ledger_dir]
            found = build_index(repo, commit, ledger_dir, base=bases[-1] if bases else None)
            if path is not None:
                _write(path, found)
        _loaded[key] = found
    return _loaded[key]


def build_index(
    repo: GitRepo, commit: str, ledger_dir: str, *, base: TreeIndex | None = None
) -> TreeIndex:
    """The index of the ledger at `commit`: from `base` where an entity's files are the
    same, else from reading every event."""
    listings, clean = _listings(repo.ls_folder(commit, ledger_dir.strip("/")), ledger_dir)
    revision = Revision("index", commit, protected=True)
    if not clean:
        return _full_read(repo, revision, ledger_dir, listings)
    reading = Reading(repo, revision, ledger_dir, listings)
    with contextlib.suppress(_Unclean):
        if base is not None and base.clean:
            return _build_from(reading, base)
        # A clean ledger is served by its index from now on: no parse is worth keeping.
        return _index(True, _rows(reading, listings))
    return _full_read(repo, revision, ledger_dir, listings)  # the read found it unclean


def _full_read(
    repo: GitRepo, revision: Revision, ledger_dir: str, listings: dict[str, list[TreeEntry]]
) -> TreeIndex:
    """An unclean ledger is read whole on every run (ledger_view): its parses are kept
    for the next one, and the full read says what is wrong."""
    ledger = read_union(repo, [revision], ledger_dir)
    resolutions = ledger.resolve_all()
    rows = [_built(key, listings.get(key, []), _row(resolutions[key])) for key in resolutions]
    return _index(not ledger.problems, rows)


def _listings(
    entries: Iterable[TreeEntry], ledger_dir: str
) -> tuple[dict[str, list[TreeEntry]], bool]:
    """The ledger's files by entity, in key order, and whether the listing shows the
    ledger clean: every file in an entity's folder, and no event id (file stem) in
    two places (else only the full read reports it right).

    Two places may be in one folder: a tree can hold two entries of one name (git
    mktree makes one; fsck only warns). One pass, grouped by folder first: a ledger
    has thousands of files in about half as many folders."""
    by_folder: dict[str, list[TreeEntry]] = {}
    stems: set[str] = set()
    files = 0
    for entry in entries:
        folder, _, name = entry.path.rpartition("/")
        if name.startswith("."):
            continue  # never events (ledger._add_entry skips them too)
        listing = by_folder.get(folder)
        if listing is None:
            listing = by_folder[folder] = []
        listing.append(entry)
        stems.add(name.removesuffix(".toml"))
        files += 1
    clean = len(stems) == files
    grouped: dict[str, list[TreeEntry]] = {}
    for listing in by_folder.values():
        key = entity_of(listing[0].path, ledger_dir)  # the same for every file of a folder
        if key is None:
            clean = False  # a ledger-level problem: only a full read says it right
        else:
            grouped[key] = listing
    return dict(sorted(grouped.items())), clean


class _Unclean(Exception):
    """A ledger-level problem the listing did not show: the full read must say it."""


class Reading(NamedTuple):
    """A clean ledger tree, whose entities are read a set at a time."""

    repo: GitRepo
    revision: Revision
    ledger_dir: str
    listings: dict[str, list[TreeEntry]]


def _rows(at: Reading, read: Iterable[str]) -> list[Built]:
    """The rows of the entities `read`, in key order, from their events.

    A clean ledger's entities resolve alone (resolution is per entity, and no id
    is shared), so reading only some of them gives each the row a full read gives;
    many are shared out between this process and a forked child (the other core)."""
    keys = list(read)
    with no_cycle_collection():  # every object made here lives until the rows are made
        if sum(len(at.listings[key]) for key in keys) < FORK_FILES:
            return _read_rows(at, keys)
        return _shared_rows(at, _parts(keys, at.listings))


def _shared_rows(at: Reading, parts: list[list[str]]) -> list[Built]:
    """The parts read by a forked child from the first and by this process from the
    last, each claiming a part before reading it, until they meet: whichever core
    is slower (a busy machine) reads less. The child sends each part as it ends it,
    and this process takes them between its own: neither pickles nor unpickles
    everything at the end. Two may claim one part at once; it is then read twice,
    to the same rows. A part claimed and not given back (a child that failed) is
    read here."""
    import mmap

    claims = mmap.mmap(-1, len(parts))  # shared with the child: 1 its claim, 2 this one's

    def from_the_first() -> Iterator[tuple[int, list[tuple[Row, str, list[str], bytes]]]]:
        at.repo.forget_inherited()  # in the child: the parent's cat-file is not its own
        for i, part in enumerate(parts):
            if claims[i]:
                return
            claims[i] = 1
            # without key and listing: the parent has them
            yield i, [(b.row, b.digest, b.ids, b.line) for b in _read_rows(at, part)]

    mine: dict[int, list[Built]] = {}
    theirs: dict[int, list[tuple[Row, str, list[str], bytes]]] = {}
    with Child(from_the_first, stream=True) as child, both_cores():
        if not child.started:
            return _read_rows(at, [key for part in parts for key in part])
        for i in reversed(range(len(parts))):
            if claims[i]:
                break
            claims[i] = 2
            mine[i] = _read_rows(at, parts[i])
            theirs.update(child.arrived())
        theirs.update(child.rest())
    rows: list[Built] = []
    for i, part in enumerate(parts):
        if i in mine:
            rows += mine[i]
        elif i in theirs:
            listings = at.listings
            rows += [Built(k, listings[k], *b) for k, b in zip(part, theirs[i], strict=True)]
        else:
            rows += _read_rows(at, part)
    return rows


def _parts(keys: list[str], listings: dict[str, list[TreeEntry]]) -> list[list[str]]:
    """`keys` in SHARES runs of about as many files each (an entity is never split)."""
    total = sum(len(listings[key]) for key in keys)
    parts: list[list[str]] = [[]]
    files = 0
    for key in keys:
        if files >= total * len(parts) / SHARES:
            parts.append([])
        parts[-1].append(key)
        files += len(listings[key])
    return parts


def _read_rows(at: Reading, keys: list[str]) -> list[Built]:
    """The rows of the entities `keys` of a clean ledger tree.

    Each file is taken as ledger.union_of takes it (a name that is no event id, a
    mode that is no file, a file that is no valid event: the same problems) and each
    entity resolved as Ledger.resolve resolves it; what a union must do besides (ids
    held twice, files in several revisions, the parse cache) a clean tree never needs."""
    repo, commit, ledger_dir, listings = at.repo, at.revision.commit, at.ledger_dir, at.listings
    found: dict[str, tuple[Event | None, list[Problem]]] = {}  # by path
    wanted: dict[str, list[tuple[str, str]]] = {}  # blob id -> (path, entity)
    stems: set[str] = set()
    for key in keys:
        for entry in listings[key]:
            stems.add(entry.path.rsplit("/", 1)[-1].removesuffix(".toml"))
            _, name_problem = classify_path(entry.path, ledger_dir)
            if name_problem is not None:
                found[entry.path] = (None, [at_commit(name_problem, commit)])
            elif entry.mode not in REGULAR:
                found[entry.path] = (None, [not_a_file(entry.path, entry.mode, commit, key)])
            else:
                wanted.setdefault(entry.oid, []).append((entry.path, key))
    if len(stems) != sum(len(listings[key]) for key in keys):
        raise _Unclean  # an id held twice, which the listing's check should have seen
    for oid, raw in repo.iter_blobs(wanted, missing_ok=True):
        for path, key in wanted[oid]:
            found[path] = owned(parse_event(raw, path, entity_key=key), key)
    # One object per distinct scope set (a handful for thousands of entities): a child
    # then pickles each once, and its parent unpickles each once (27 -> 13 ms at 2,500).
    shared: dict[tuple[EntityState, ...], tuple[EntityState, ...]] = {}
    built = []
    for key in keys:
        listing = listings[key]
        events: list[Event] = []
        problems: list[Problem] = []
        for entry in listing:
            if entry.path not in found:  # a blob git could not give: name the file
                found[entry.path] = owned(parse_blob(repo, entry.oid, entry.path, key), key)
            event, its_problems = found[entry.path]
            if event is not None:
                events.append(event)
            problems += its_problems
        scopes, title, status, ids = _row(resolve_entity(key, events, problems))
        built.append(_built(key, listing, (shared.setdefault(scopes, scopes), title, status, ids)))
    return built


Row = tuple[tuple[EntityState, ...], str | None, str | None, list[str]]  # scopes … event ids


class Built(NamedTuple):
    """One entity as an index holds it, made where it is read (either core)."""

    key: str
    listing: list[TreeEntry]
    row: Row
    digest: str
    ids: list[str]  # its files' event ids
    line: bytes  # its line in the index file


def _built(key: str, listing: list[TreeEntry], row: Row) -> Built:
    text = _listing_json(listing)
    digest = _hash(text)  # of the JSON the line holds
    ids = [entry.path.rsplit("/", 1)[-1].removesuffix(".toml") for entry in listing]
    return Built(key, listing, row, digest, ids, _line(key, digest, text))


def _line(key: str, digest: str, listing_json: bytes) -> bytes:
    """`_json([key, digest, listing])`, spelled out to reuse the listing's JSON."""
    return b"".join((b"[", _json(key), b',"', digest.encode("ascii"), b'",', listing_json, b"]"))


Compare = tuple[list[str], list[list[str]]]  # each entity's files' digest, and file names


def _row(resolution: Resolution) -> Row:
    state = resolution.state
    # only what applicability reads: the rest of a state varies more than scopes do
    scopes = tuple(
        EntityState(triggers=h.triggers, applies_to=h.applies_to) for h in judged_scopes(resolution)
    )
    status = None if state.status is None else state.status.value
    events = [i for i in resolution.order if i not in resolution.dropped]
    return scopes, state.title, status, events


def _index(clean: bool, rows: list[Built]) -> TreeIndex:
    """An index of rows given in key order."""
    keys: list[str] = []
    digests: list[str] = []
    ids: list[list[str]] = []
    scope_of: list[int] = []
    files: list[list[TreeEntry]] = []
    lines: list[bytes] = []
    details = Details([], [], [])
    scope_rows: dict[tuple[EntityState, ...], int] = {}
    for key, listing, (scopes, title, status, events), digest, names, line in rows:
        keys.append(key)
        lines.append(line)
        digests.append(digest)
        ids.append(names)
        scope_of.append(scope_rows.setdefault(scopes, len(scope_rows)))
        files.append(listing)
        details.titles.append(title)
        details.statuses.append(status)
        details.event_ids.append(events)
    compare = (digests, ids)
    distinct = list(scope_rows)
    return TreeIndex(clean, keys, compare, scope_of, distinct, details, files.__getitem__, lines)


def _build_from(reading: Reading, base: TreeIndex) -> TreeIndex:
    """The index from `base` (clean) and the entities whose files differ in the tree
    `reading` names (clean). An entity's summary is a function of its files alone
    (resolution is per entity), so an entity listed the same in both trees keeps its row."""
    at = base.rows()
    changed = [
        key
        for key, listing in reading.listings.items()
        if key not in at or base.digests[at[key]] != _digest(listing)
    ]
    fresh = {built.key: built for built in _rows(reading, changed)}
    details = base.details
    rows: list[Built] = []
    for key, listing in reading.listings.items():
        if key in fresh:
            rows.append(fresh[key])
        else:
            i = at[key]
            scopes = base.scopes[base.scope_of[i]]
            row = (scopes, details.titles[i], details.statuses[i], list(details.event_ids[i]))
            rows.append(_built(key, listing, row))
    return _index(True, rows)


def _digest(listing: Sequence[TreeEntry]) -> str:
    """Of an entity's entries; JSON, so that no character of a name can pass for a separator."""
    return _hash(_listing_json(listing))


# Text JSON writes as it is: printable ASCII but for `"` and `\` (json escapes the rest).
_AS_IS = re.compile(r"[ !#-\[\]-~]*")


def _listing_json(listing: Sequence[TreeEntry]) -> bytes:
    """`_json([list(e) for e in listing])`, spelled out for the usual entries (git's
    modes, types and ids, and plain names): a first index makes one per entity."""
    if all(_AS_IS.fullmatch("".join(entry)) for entry in listing):
        items = ",".join(f'["{m}","{t}","{o}","{p}"]' for m, t, o, p in listing)
        return f"[{items}]".encode("ascii")
    return _json([list(e) for e in listing])


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# --------------------------------------------------------------------------- on disk


@cache
def format_version() -> str:
    """Changes whenever a summary could: index files of another version are rebuilt."""
    from failgate_hooks import parsecache
    from failgate_hooks.core import events, gates, resolve, wildmatch
    from failgate_hooks.git import repo as gitio
    from failgate_hooks.ledger import union as ledger

    modules = (events, wildmatch, resolve, gates, gitio, ledger, parsecache)
    rules = sources_digest(*(m.__file__ for m in modules), __file__)
    return f"{FORMAT}-{parsecache.format_version()}-{rules}"


def _index_path(repo: GitRepo, tree: str, ledger_dir: str) -> str | None:
    try:
        common = repo.common_dir
    except GitError:
        return None
    # The same tree read as another folder gives other paths: the folder is in the name.
    where = hashlib.sha256(ledger_dir.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(common, "failgate", "index", f"{tree}-{where}.json")


# The file: a version line; a line of the parts' checksums and lengths; then the
# parts, each compact JSON: the summary (read by every run), the details (read when
# settled entities are shown), the digests and file names (read when trees are
# compared), the start of each entity's line; then one line per entity, its key,
# its files' digest and its entries. A run reads the summary, then seeks to the
# lines of the entities it reads in full: a 10,000-event index is 2 MB, its summary
# 150 kB.

PARTS = ("summary", "details", "compare", "offsets")


def _read(path: str, ledger_dir: str, rebuilt: Callable[[], TreeIndex]) -> TreeIndex | None:
    """The index in `path`, or None when it is missing, of another version, or corrupt.

    The summary is checked and decoded now; the other parts when first read, and
    if they are bad then, `rebuilt` gives them from git instead. The file stays
    open: a writer replaces it by renaming, so this handle keeps what it read."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed when the process ends)
    except OSError:
        return None
    try:
        if handle.readline() != MAGIC + b" " + format_version().encode("ascii") + b"\n":
            return None
        table = handle.readline().split()
        sums = table[: len(PARTS)]
        lengths = [int(n) for n in table[len(PARTS) :]]
        if len(sums) != len(PARTS) or len(lengths) != len(PARTS) or min(lengths) < 0:
            return None
        start = handle.tell()
        head = handle.read(lengths[0])
    except (OSError, ValueError):
        return None
    if _checksum(head) != sums[0]:
        return None
    import json  # here: a repository without a ledger never reads an index

    try:
        clean, keys, scope_of, scopes = _decode_head(json.loads(head))
    except (ValueError, TypeError, RecursionError):
        return None
    where = [start + sum(lengths[:i]) for i in range(len(PARTS) + 1)]  # each part, then files
    fallback: list[TreeIndex] = []

    def again() -> TreeIndex:
        if not fallback:
            fallback.append(rebuilt())
        return fallback[0]

    def part(i: int, decode: Callable[[Any], Any]) -> Any:
        try:
            handle.seek(where[i])
            body = handle.read(lengths[i])
            if _checksum(body) != sums[i]:
                raise ValueError("checksum")
            return decode(json.loads(body))
        except (OSError, ValueError, TypeError, RecursionError):
            return None

    def details() -> Details:
        found = part(1, lambda data: _decode_details(data, len(keys)))
        return found if found is not None else again().details

    def compare() -> Compare:
        found = part(2, lambda data: _decode_compare(data, len(keys)))
        return found if found is not None else again()._compared()

    offsets: list[list[int]] = []

    def files(row: int) -> list[TreeEntry]:
        if not offsets:
            offsets.append(part(3, lambda data: _decode_offsets(data, len(keys) + 1)) or [])
        if offsets[0]:
            try:
                handle.seek(where[-1] + offsets[0][row])
                line = json.loads(handle.read(offsets[0][row + 1] - offsets[0][row]))
                found = _decode_listing(line, keys[row], ledger_dir)
                if found is not None:
                    return found
            except (OSError, ValueError, TypeError, RecursionError):
                pass
        return again().files(row)

    return TreeIndex(clean, keys, compare, scope_of, scopes, details, files)


def _decode_listing(line: Any, key: str, ledger_dir: str) -> list[TreeEntry] | None:
    """One entity's line: its key, its digest and its entries, each checked; else None.

    The key and the folder of every path must be the row's: a line moved to
    another row names another entity's files."""
    if type(line) is not list or len(line) != 3 or line[0] != key or type(line[2]) is not list:
        return None
    entries = []
    for item in line[2]:
        if type(item) is not list or len(item) != 4 or not _strings(item):
            return None
        entry = TreeEntry(*item)
        if entity_of(entry.path, ledger_dir) != key:
            return None
        entries.append(entry)
    return entries if _digest(entries) == line[1] else None


def _checksum(body: bytes) -> bytes:
    return hashlib.sha256(body).hexdigest().encode("ascii")


def _decode_head(data: Any) -> tuple[bool, list[str], list[int], list[tuple[EntityState, ...]]]:
    """The summary part, every value type-checked: ValueError for anything else."""
    if type(data) is not list or len(data) != 4:
        raise ValueError("not an index")
    clean, keys, scope_of, scopes = data
    if type(clean) is not bool or not _strings(keys):
        raise ValueError("not an index")
    if type(scope_of) is not list or type(scopes) is not list or len(keys) != len(scope_of):
        raise ValueError("not an index")
    if not (
        all(type(i) is int and 0 <= i < len(scopes) for i in scope_of)
        and all(type(s) is list and s and all(_scope_ok(h) for h in s) for s in scopes)
    ):
        raise ValueError("a value of the wrong type")
    heads = [tuple(_scope(h) for h in s) for s in scopes]
    return clean, keys, scope_of, heads


def _decode_compare(data: Any, rows: int) -> Compare:
    if type(data) is not list or len(data) != 2:
        raise ValueError("not the digests and ids")
    digests, ids = data
    if not _strings(digests) or len(digests) != rows:
        raise ValueError("not the digests")
    if type(ids) is not list or len(ids) != rows or not all(_strings(i) for i in ids):
        raise ValueError("not the ids")
    return digests, ids


def _decode_offsets(data: Any, rows: int) -> list[int]:
    """`rows` line offsets, none going back: ValueError otherwise."""
    if type(data) is not list or len(data) != rows or any(type(v) is not int for v in data):
        raise ValueError("not the offsets")
    if any(b < a for a, b in zip([0, *data], data, strict=False)):
        raise ValueError("offsets must not go back")
    return data


def _decode_details(data: Any, rows: int) -> Details:
    if type(data) is not list or len(data) != 3 or any(type(c) is not list for c in data):
        raise ValueError("not index details")
    titles, statuses, event_ids = data
    if any(len(c) != rows for c in data):
        raise ValueError("columns of different lengths")
    if not (
        all(t is None or type(t) is str for t in titles)
        and all(s is None or type(s) is str for s in statuses)
        and all(_strings(ids) for ids in event_ids)
    ):
        raise ValueError("a value of the wrong type")
    return Details(titles, statuses, event_ids)


def _scope_record(state: EntityState) -> list[Any]:
    scope = state.applies_to
    if scope is None:
        return [state.triggers, None]
    return [state.triggers, [scope.since, scope.paths, scope.refs, scope.environments]]


def _scope_ok(value: Any) -> bool:
    if type(value) is not list or len(value) != 2 or not _optional_strings(value[0]):
        return False
    scope = value[1]
    if scope is None:
        return True
    return (
        type(scope) is list
        and len(scope) == 4
        and (scope[0] is None or type(scope[0]) is str)
        and all(_optional_strings(v) for v in scope[1:])
    )


def _scope(value: list[Any]) -> EntityState:
    triggers, scope = value
    applies_to = None
    if scope is not None:
        since, paths, refs, environments = scope
        applies_to = AppliesTo(since, _tuple(paths), _tuple(refs), _tuple(environments))
    return EntityState(triggers=_tuple(triggers), applies_to=applies_to)


def _tuple(value: list[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _optional_strings(value: Any) -> bool:
    return value is None or _strings(value)


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _write(path: str, index: TreeIndex) -> None:
    """Write-then-rename, and keep only the latest few; an unwritable folder is no cache."""
    scopes = [[_scope_record(h) for h in heads] for heads in index.scopes]
    head = _json([index.clean, index.keys, index.scope_of, scopes])
    lines = index.lines or [
        _line(key, index.digests[row], _listing_json(index.files(row)))
        for row, key in enumerate(index.keys)
    ]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    compare = _json([index.digests, index.ids])
    parts = [head, _json(list(index.details)), compare, _json(offsets)]
    table = [_checksum(p) for p in parts] + [str(len(p)).encode("ascii") for p in parts]
    version = format_version().encode("ascii")
    data = b"".join([MAGIC + b" " + version + b"\n", b" ".join(table) + b"\n", *parts, *lines])
    if write_whole(path, data):
        with contextlib.suppress(OSError):
            _prune(os.path.dirname(path))


@cache
def _encoder() -> Any:
    import json

    return json.JSONEncoder(separators=(",", ":"))  # json.dumps with options makes one a call


def _json(value: Any) -> bytes:
    return _encoder().encode(value).encode("utf-8")  # type: ignore[no-any-return]


def _prune(folder: str) -> None:
    """Keep the KEEP newest index files: a tree read long ago is rebuilt if ever read again."""
    with os.scandir(folder) as found:
        files = [(e.stat().st_mtime, e.path) for e in found if e.name.endswith(".json")]
    for _, path in sorted(files, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            os.unlink(path)
