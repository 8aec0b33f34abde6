"""The evidence ref as git holds it: read by object id, written with plumbing, pushed, fetched.

`refs/failgate/evidence` names a commit whose tree holds one file per content
key (core/evidence.py's `evidence_path`). A remote's copy is fetched into a
ref of its own, `refs/failgate/remotes/<remote>/evidence`: a forced refspec onto
the local ref would overwrite statements made here, and a non-forced one would
make `git fetch` fail whenever the two diverge. Nothing here runs a hook: the
index is a temporary file, and commits are made with `commit-tree`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.repo import GitRepo, run_git
from failgate_hooks.git.trees import TreeEntry

FAILGATE_REFS = "refs/failgate/"  # failgate's own refs: the evidence ref, and its tracking refs
EVIDENCE_REF = FAILGATE_REFS + "evidence"
TRACKING_PREFIX = FAILGATE_REFS + "remotes/"
# Evidence commits are data a machine writes: they carry no person's name.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "failgate",
    "GIT_AUTHOR_EMAIL": "failgate@invalid",
    "GIT_COMMITTER_NAME": "failgate",
    "GIT_COMMITTER_EMAIL": "failgate@invalid",
}


def tracking_ref(remote: str) -> str:
    """Where a remote's evidence is fetched to."""
    return f"{TRACKING_PREFIX}{remote}/evidence"


def fetch_refspec(remote: str) -> str:
    """The refspec that brings `remote`'s evidence into its tracking ref (forced: it mirrors)."""
    return f"+{EVIDENCE_REF}:{tracking_ref(remote)}"


def config_refspec(remote: str) -> str:
    """`fetch_refspec` as a pattern, for `remote.<name>.fetch`: git fails a whole fetch
    over a plain refspec the remote lacks, and most remotes hold no evidence yet."""
    return f"+{EVIDENCE_REF}*:{tracking_ref(remote)}*"


def evidence_tips(repo: GitRepo) -> list[str]:
    """The commits of the local evidence ref and of each configured remote's tracking
    copy: never another ref the pattern above brings (`evidence-old`, and git's `*`
    crosses `/`: `evidence-x/evidence`), whose lines no server checked."""
    read = [EVIDENCE_REF, *(tracking_ref(remote) for remote in repo.remotes())]
    out = repo.run("for-each-ref", "--format=%(objectname) %(refname)", *read)
    tips = []
    for line in out.splitlines():
        tip, _, ref = line.partition(" ")
        if tip and ref in read:  # for-each-ref matches a prefix of a path too
            tips.append(tip)
    return [tip for tip in dict.fromkeys(tips) if repo.has_commit(tip)]


def read_file(repo: GitRepo, commit: str, path: str) -> bytes | None:
    """The bytes of `path` in evidence commit `commit`, or None when it holds no such file,
    or one too large to hold statements (the server refuses such a push): no evidence."""
    from failgate_hooks.core.evidence import MAX_FILE_BYTES  # only where statements are read

    entry = repo.tree_entry(commit, path)
    if entry is None or entry.type != "blob":
        return None
    return repo.read_blob_at_most(entry.oid, MAX_FILE_BYTES)


def entries(repo: GitRepo, commit: str) -> dict[str, TreeEntry]:
    """Every entry of evidence commit `commit`, folders too, each by its whole path.

    Each tree is read through the parser that refuses one malformed (two entries of
    one name among them): `ls-tree -r` lists both of two, and a reader keeping one
    would compare a file that no lookup (`read_file`) can ever read. Folders are
    entered only as deep as evidence files lie: nothing deeper is evidence, and a
    pushed tree nested without end would otherwise be walked to its end."""
    from failgate_hooks.core.evidence_layout import DEPTH  # only where evidence is read

    found: dict[str, TreeEntry] = {}
    folders = [("", repo.commit_tree(commit))]
    while folders:
        folder, tree = folders.pop()
        try:
            listed = repo.tree_entries(tree)
        except GitError as error:
            raise GitError(
                f"{EVIDENCE_REF} commit {commit[:12]}, folder {folder or '/'}: {error.message}",
                hint=error.hint,
            ) from None
        for entry in listed:
            path = f"{folder}/{entry.path}" if folder else entry.path
            found[path] = entry._replace(path=path)
            if entry.type == "tree" and path.count("/") + 1 < DEPTH:
                folders.append((path, entry.oid))
    return found


def files(repo: GitRepo, commit: str) -> dict[str, str]:
    """Every file of evidence commit `commit`: its path and blob id."""
    return files_of(entries(repo, commit))


def files_of(listed: Mapping[str, TreeEntry]) -> dict[str, str]:
    """The files among what `entries` listed: each path and blob id."""
    return {path: e.oid for path, e in listed.items() if e.type == "blob"}


def write_commit(
    repo: GitRepo, parents: Sequence[str], changed: Mapping[str, bytes], message: str
) -> str:
    """A new evidence commit: the first parent's tree with `changed` files written over it."""
    with tempfile.TemporaryDirectory(prefix="failgate-evidence-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        if parents:
            repo.run("read-tree", parents[0], env=env)
        else:
            repo.run("read-tree", "--empty", env=env)
        cacheinfo = []
        for path, data in sorted(changed.items()):
            blob = repo.run("hash-object", "-w", "--stdin", stdin=data.decode("utf-8")).strip()
            cacheinfo.append(f"100644 {blob}\t{path}\0")
        if cacheinfo:
            # -z: a merge writes the paths a fetched evidence tree holds, and a newline in
            # one would start an index line of its own (another path, another blob).
            listing = "".join(cacheinfo)
            repo.run("update-index", "--add", "-z", "--index-info", stdin=listing, env=env)
        tree = repo.run("write-tree", env=env)
    args = ["commit-tree", tree, "-m", message]
    for parent in parents:
        args += ["-p", parent]
    return repo.run(*args, env=_IDENTITY).strip()


def update_ref(repo: GitRepo, new: str, old: str | None) -> bool:
    """Move the evidence ref from `old` (None: it must not exist) to `new`; False when it
    moved meanwhile."""
    return repo.succeeds("update-ref", EVIDENCE_REF, new, old or "")


def resolve(repo: GitRepo, ref: str = EVIDENCE_REF) -> str | None:
    """The commit `ref` names now, or None (asked afresh: the ref moves under a push)."""
    out = repo.run("for-each-ref", "--format=%(objectname)", ref)
    return out.splitlines()[0] if out else None


def _cwd(repo: GitRepo) -> str:
    return repo.working_dir or repo.git_dir


def push(repo: GitRepo, remote: str) -> tuple[bool, str]:
    """Push the local evidence ref, never forced: (whether it landed, git's words).

    No client hook runs: the evidence ref holds no code and no ledger."""
    code, out = run_git(
        _cwd(repo), "push", "--no-verify", "--porcelain", remote, f"{EVIDENCE_REF}:{EVIDENCE_REF}"
    )
    return code == 0, out


def fetch(repo: GitRepo, remote: str) -> str | None:
    """Fetch `remote`'s evidence into its tracking ref; the commit, or None when it has none."""
    code, out = run_git(_cwd(repo), "fetch", "--quiet", "--no-tags", remote, fetch_refspec(remote))
    if code != 0:
        if "couldn't find remote ref" in out:
            return None
        raise GitError(f"git fetch {remote} {EVIDENCE_REF} failed: {out.strip()[:300]}")
    return resolve(repo, tracking_ref(remote))


def add_fetch_refspec(repo: GitRepo, remote: str) -> bool:
    """Make `git fetch REMOTE` bring its evidence too; False when it already did. The
    plain refspec earlier versions added (which broke `git fetch`) is replaced."""
    key, spec = f"remote.{remote}.fetch", config_refspec(remote)
    had = _fetch_refspecs(repo, key)
    if fetch_refspec(remote) in had:
        repo.run("config", "--fixed-value", "--unset-all", key, fetch_refspec(remote))
    elif spec in had:
        return False
    if spec not in had:
        repo.run("config", "--add", key, spec)
    return True


def remove_fetch_refspec(repo: GitRepo, remote: str) -> bool:
    """Take that refspec out again, or the plain one of earlier versions; False when
    neither was there."""
    key = f"remote.{remote}.fetch"
    had = _fetch_refspecs(repo, key)
    ours = [spec for spec in (config_refspec(remote), fetch_refspec(remote)) if spec in had]
    for spec in ours:
        repo.run("config", "--fixed-value", "--unset-all", key, spec)
    return bool(ours)


def _fetch_refspecs(repo: GitRepo, key: str) -> list[str]:
    """Every value of `key`, each whole: a value may hold a newline (`"a\\nb"` in the
    config file), which a line-by-line read would take for two values, one of them ours."""
    try:
        out = repo.run("config", "-z", "--get-all", key, strip=False)
    except GitError:  # exit 1: the key is not set
        return []
    return out.split("\0")[:-1]
