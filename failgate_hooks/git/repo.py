"""The only place that talks to git.

Through GitPython's command interface (`Repo.git`), never its object database:
that cannot read SHA-256 repositories. Objects are read through one persistent
`git cat-file --batch` (catfile.py) and parsed here, so ids of 40 and 64 hex
both work. Every failure becomes a `GitError` that says what and where.
"""

from __future__ import annotations

import operator
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from failgate_hooks.core.errors import GitError, UsageError
from failgate_hooks.git.catfile import BoundedBlob, CatFile
from failgate_hooks.git.trees import TreeEntry, parse_ls_tree, parse_tree

if TYPE_CHECKING:
    import git

HEX_ID_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
NULL_ID_RE = re.compile(r"^0+\Z")


# A commit is its own objects and parents, as a push sends them: never a refs/replace/
# stand-in, nor the parents .git/info/grafts says it has (deprecated, and still honoured
# by git 2.39), which could cut a gate's `since` out of a commit's ancestry. No graft
# file can exist beneath a file, and git says nothing of one it cannot find.
FAITHFUL_HISTORY = {
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_GRAFT_FILE": os.path.join(os.devnull, "no-grafts"),
}

# A pathspec means what failgate wrote, whatever the user's or the pusher's environment
# says: GIT_ICASE_PATHSPECS=1 makes `ledger` match `LEDGER` too, GIT_LITERAL_PATHSPECS=1
# reads `:(top,glob)…` as a file's name that nothing matches, and any of them beside a
# `--literal-pathspecs` makes git die. On every git process failgate starts.
PATHSPECS_AS_WRITTEN = {
    "GIT_LITERAL_PATHSPECS": "0",
    "GIT_GLOB_PATHSPECS": "0",
    "GIT_NOGLOB_PATHSPECS": "0",
    "GIT_ICASE_PATHSPECS": "0",
}


def local_folder(common_dir: str) -> str:
    """`<git-common-dir>/failgate`: this machine's files, never committed (the trust
    store, the caches, a ledger write's temporaries); linked worktrees share it."""
    return os.path.join(common_dir, "failgate")


def is_null_id(oid: str) -> bool:
    """An all-zero id of any length: git's "nothing" in hook input (SHA-1 or SHA-256)."""
    return bool(NULL_ID_RE.match(oid))


class GitRepo:
    """A repository (work tree or bare) with one lazily started `cat-file --batch`."""

    def __init__(self, repo: git.Repo) -> None:
        self._repo = repo
        # Before anything starts git, the persistent cat-file included.
        repo.git.update_environment(**FAITHFUL_HISTORY, **PATHSPECS_AS_WRITTEN)
        self._git = repo.git
        self.cat_file = CatFile(repo.git)  # objects are read through the methods below
        self._common_dir: str | None = None
        self._listings: dict[tuple[str, str | None], list[TreeEntry]] = {}
        self._folders: dict[tuple[str, str], list[TreeEntry]] = {}  # by tree id and path
        self._trees: dict[str, tuple[TreeEntry, ...]] = {}  # parsed tree objects, by id
        self._roots: dict[str, str] = {}  # the root tree of an object named by its full id
        self._sorted: dict[str, tuple[Sequence[TreeEntry], Sequence[str]]] = {}
        self._remotes: tuple[str, ...] | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | os.PathLike[str] = ".") -> GitRepo:
        """Open the repository containing `path`, or the one `GIT_DIR` names."""
        try:
            import git
        except ImportError as exc:  # a broken install, or git missing
            import shutil

            # GitPython refuses to load without git, in twenty lines that never say so.
            if shutil.which(os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git") is None:
                raise GitError(
                    "git is not installed or not on PATH",
                    hint="install git or put it on PATH (or name it in GIT_PYTHON_GIT_EXECUTABLE)",
                ) from None
            raise GitError(f"cannot load GitPython: {exc}") from exc
        try:
            if os.environ.get("GIT_DIR"):
                repo = git.Repo(os.environ["GIT_DIR"])
            else:
                repo = git.Repo(path, search_parent_directories=True)
        except git.InvalidGitRepositoryError:
            # where failgate was started is a usage matter (exit 2), not the ledger's integrity
            raise UsageError(
                f"not a git repository: {os.path.abspath(path)}",
                hint="run failgate inside a git repository, or pass -C DIR",
            ) from None
        except git.NoSuchPathError:
            raise UsageError(f"no such directory: {path}", hint="pass -C DIR") from None
        except git.GitCommandNotFound:
            raise GitError("git is not installed or not on PATH") from None
        return cls(repo)

    def close(self) -> None:
        """Stop the persistent `cat-file`, if it was started."""
        self.cat_file.close()
        self._repo.close()

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plain commands

    def run(
        self,
        *args: str,
        strip: bool = True,
        stdin: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """Run `git ARGS` (feeding `stdin`) and return its output; a failure is a GitError.

        `env` adds variables to this one command's environment (GIT_INDEX_FILE
        for a temporary index), never to the repository's later commands."""
        import git

        extra = None if env is None else dict(env)
        try:
            if stdin is not None:
                return self._run_with_input(args, stdin, extra)
            return str(self._git.execute(["git", *args], strip_newline_in_stdout=strip, env=extra))
        except git.GitCommandError as exc:
            detail = _first_line(exc.stderr) or f"exit {exc.status}"
            raise GitError(f"git {' '.join(args[:3])} failed: {detail}") from None
        except git.GitCommandNotFound:
            raise GitError("git is not installed or not on PATH") from None

    def _run_with_input(self, args: Sequence[str], stdin: str, env: dict[str, str] | None) -> str:
        import git

        handle = self._git.execute(
            ["git", *args], as_process=True, istream=subprocess.PIPE, env=env
        )
        proc = handle.proc
        assert proc is not None
        out, err = proc.communicate(stdin.encode("utf-8", "surrogateescape"))
        if proc.returncode != 0:
            raise git.GitCommandError(["git", *args], proc.returncode, err, out)
        return str(out.decode("utf-8", "surrogateescape"))

    def start(self, *args: str) -> Callable[[], str]:
        """Start `git ARGS` now; the returned function waits for its output (GitError if failed).

        For a question whose answer is needed only at the end: git works on the
        other core meanwhile."""
        import git

        try:
            handle = self._git.execute(["git", *args], as_process=True)
        except git.GitCommandNotFound:
            raise GitError("git is not installed or not on PATH") from None

        # The closure holds GitPython's handle: collecting it kills the process.
        def result() -> str:
            proc = handle.proc
            assert proc is not None
            out, err = proc.communicate()
            if proc.returncode != 0:
                detail = _first_line(err) or f"exit {proc.returncode}"
                raise GitError(f"git {' '.join(args[:3])} failed: {detail}")
            return str(out.decode("utf-8", "surrogateescape"))

        return result

    def succeeds(self, *args: str) -> bool:
        """Whether `git ARGS` exits 0 (for yes/no questions such as ancestry)."""
        import git

        try:
            self._git.execute(["git", *args])
        except git.GitCommandError:
            return False
        return True

    # ------------------------------------------------------------------ facts about the repo

    @property
    def working_dir(self) -> str | None:
        """The work tree's root, or None in a bare repository."""
        return None if self._repo.bare else str(self._repo.working_tree_dir)

    @property
    def git_dir(self) -> str:
        return str(self._repo.git_dir)

    @property
    def common_dir(self) -> str:
        """`git rev-parse --git-common-dir`, absolute: linked worktrees share it."""
        if self._common_dir is None:
            # GitPython read it (GIT_COMMON_DIR, or a linked worktree's commondir file)
            # while opening the repository: no rev-parse process.
            self._common_dir = os.path.abspath(str(self._repo.common_dir))
        return self._common_dir

    def is_shallow(self) -> bool:
        return self.run("rev-parse", "--is-shallow-repository") == "true"

    def remotes(self) -> tuple[str, ...]:
        """The configured remotes' names, asked of git once per opened repository:
        one command reads the remote's default branch and its tip of the destination."""
        if self._remotes is None:
            self._remotes = tuple(self.run("remote").split())
        return self._remotes

    def config_get(self, key: str) -> str | None:
        """A git config value, or None when unset."""
        import git

        try:
            return str(self._git.execute(["git", "config", "--get", key]))
        except git.GitCommandError:
            return None

    def config_matching(self, pattern: str) -> list[tuple[str, str]]:
        """(key, value) of every git config entry whose key matches the regex `pattern`."""
        import git

        try:
            out = str(self._git.execute(["git", "config", "-z", "--get-regexp", pattern]))
        except git.GitCommandError:  # none matches
            return []
        entries = [e.partition("\n") for e in out.split("\0") if e]
        return [(key, value) for key, _, value in entries]

    # ------------------------------------------------------------------ revisions

    def resolve_commit(self, rev: str) -> str:
        """The full id of the commit `rev` names (tags peeled); GitError when unknown."""
        if not rev or rev.startswith("-") or "\n" in rev:
            raise GitError(f"unknown revision {rev!r}")
        # The running cat-file resolves names as rev-parse does, without a process each.
        oid = self.cat_file.resolve(f"{rev}^{{commit}}")
        if oid is None:
            raise GitError(
                f"unknown revision {rev!r}: no commit by that name in this repository",
                hint="check the name with `git log`, or fetch it first",
            )
        return oid

    def try_resolve_commit(self, rev: str) -> str | None:
        """Like resolve_commit, but None when the revision is unknown."""
        try:
            return self.resolve_commit(rev)
        except GitError:
            return None

    def has_commit(self, oid: str) -> bool:
        """Whether the object database holds commit `oid` (full id)."""
        return self.object_type(oid) == "commit"

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether `ancestor` is `descendant` or one of its ancestors."""
        return self.succeeds("merge-base", "--is-ancestor", ancestor, descendant)

    def symbolic_ref(self, name: str) -> str | None:
        """What a symbolic ref points at (e.g. refs/remotes/origin/HEAD), or None."""
        import git

        try:
            return str(self._git.execute(["git", "symbolic-ref", "--quiet", name])).strip()
        except git.GitCommandError:
            return None

    # ------------------------------------------------------------------ trees

    def ls_tree(self, commit: str, path: str | None = None) -> list[TreeEntry]:
        """Every entry of `commit`'s tree (under `path`), recursively, from one `ls-tree -z -r`."""
        # A commit id names its tree forever: ask git once per process, however many
        # callers (config, ledger, append-only, inputs) want the same listing.
        memo_key = (commit, path) if HEX_ID_RE.match(commit) else None
        if memo_key is not None and path:
            return self.ls_folder(commit, path)
        if memo_key is not None and memo_key in self._listings:
            return list(self._listings[memo_key])
        args = ["ls-tree", "-z", "--full-tree", "-r", commit]
        if path:
            args += ["--", path]
        out = self.run(*args, strip=False)
        entries = list(parse_ls_tree(out))
        if memo_key is not None:
            self._listings[memo_key] = entries
        return list(entries)

    def sorted_files(self, commit: str) -> tuple[Sequence[TreeEntry], Sequence[str]]:
        """Every entry of `commit`'s tree and their paths, sorted by path, made once.

        For matching many globs against one tree: with the paths sorted, a glob's
        literal prefix finds its candidates by bisection (wildmatch.matching)."""
        found = self._sorted.get(commit)
        if found is None:
            entries = tuple(sorted(self.ls_tree(commit), key=_path_of))
            found = (entries, tuple(map(_path_of, entries)))
            if HEX_ID_RE.match(commit):  # a name such as HEAD may move; an id never does
                self._sorted[commit] = found
        return found

    def ls_folder(self, commit: str, path: str) -> list[TreeEntry]:
        """What `ls_tree(commit, path)` gives (ls-tree reads paths literally), at less cost.

        The folder's tree is found through `cat-file`: no process at all when the
        commit lacks it, and one `ls-tree` per distinct tree, so that revisions
        whose folder is the same tree (the usual push: code changed, ledger not)
        share one listing."""
        if not path.strip("/"):
            return self.ls_tree(commit)
        entry = self.tree_entry(commit, path)
        if entry is None:
            return []
        if entry.type != "tree":
            return [entry]  # as ls-tree lists a file, link or submodule at that path
        if (entry.oid, entry.path) not in self._folders:
            out = self.run("ls-tree", "-z", "-r", entry.oid, strip=False)
            self._folders[entry.oid, entry.path] = list(parse_ls_tree(out, entry.path + "/"))
        return list(self._folders[entry.oid, entry.path])

    def tree_entry(self, commit: str, path: str) -> TreeEntry | None:
        """The entry at `path` in commit `commit`, read through `cat-file`; None when absent."""
        parts = [part for part in path.split("/") if part]
        entry = TreeEntry("040000", "tree", self._root_tree(commit), "")
        for part in parts:
            if entry.type != "tree":
                return None
            found = next((e for e in self.tree_entries(entry.oid) if e.path == part), None)
            if found is None:
                return None
            entry = found
        return TreeEntry(entry.mode, entry.type, entry.oid, "/".join(parts))

    def _root_tree(self, treeish: str) -> str:
        """The tree a commit, a tag of one, or a tree itself names, as ls-tree takes them."""
        # An object id names its tree forever; a name like HEAD may move, so is not kept.
        if treeish not in self._roots:
            tree = self._read_root_tree(treeish)
            if not HEX_ID_RE.match(treeish):
                return tree
            self._roots[treeish] = tree
        return self._roots[treeish]

    def _read_root_tree(self, treeish: str) -> str:
        for _ in range(16):  # a tag of a tag of …, within reason
            found = self.read_object(treeish)
            if found is None:
                break
            kind, data = found
            if kind == "tree":
                return treeish
            first = data.split(b"\n", 1)[0]
            if kind == "commit" and first.startswith(b"tree "):
                return first[5:].decode("ascii")
            if kind != "tag" or not first.startswith(b"object "):
                break
            treeish = first[7:].decode("ascii")
        raise GitError(f"{treeish} does not name a tree in the object database")

    def tree_entries(self, tree: str) -> list[TreeEntry]:
        """The entries of one tree object (not recursive), each named by its own name."""
        # A tree id names its entries forever: a path walked for every gate reads each once.
        if tree not in self._trees:
            self._trees[tree] = tuple(self._read_tree(tree))
        return list(self._trees[tree])

    def _read_tree(self, tree: str) -> list[TreeEntry]:
        found = self.read_object(tree)
        if found is None or found[0] != "tree":
            raise GitError(f"tree {tree} is missing from the object database")
        return parse_tree(tree, found[1])

    # ------------------------------------------------------------------ objects

    def read_object(self, oid: str) -> tuple[str, bytes] | None:
        """(type, content) of an object, or None when it is missing."""
        return self.cat_file.read(oid)

    def iter_blobs(
        self, oids: Iterable[str], *, missing_ok: bool = False
    ) -> Iterator[tuple[str, bytes]]:
        """Many blobs through the one `cat-file`, each given as soon as git answers.

        With `missing_ok`, a blob git lacks is left out instead of failing."""
        yield from self.cat_file.iter_blobs(_full_ids(oids), missing_ok=missing_ok)

    def iter_bounded_blobs(
        self, oids: Iterable[str], max_bytes: int, *, missing_ok: bool = False
    ) -> Iterator[BoundedBlob]:
        """`iter_blobs` for bytes a pusher chose: a blob of more than `max_bytes` comes
        with its size and no data, and is never held in memory."""
        wanted = _full_ids(oids)
        yield from self.cat_file.iter_bounded_blobs(wanted, max_bytes, missing_ok=missing_ok)

    def object_type(self, oid: str) -> str | None:
        """`commit`, `tree`, `blob` or `tag`; None when missing."""
        if "\n" in oid or " " in oid:
            return None
        found = self.read_object(oid)
        return None if found is None else found[0]

    def read_blob(self, oid: str) -> bytes:
        """The bytes of blob `oid`; GitError when it is missing."""
        found = self.read_object(oid)
        if found is None or found[0] != "blob":
            raise GitError(f"blob {oid} is missing from the object database")
        return found[1]

    def read_blob_at_most(self, oid: str, max_bytes: int) -> bytes | None:
        """The bytes of blob `oid` a pusher chose, or None when it holds more than
        `max_bytes` (then never held in memory); GitError when it is missing."""
        for found in self.iter_bounded_blobs([oid], max_bytes):
            return found.data
        raise GitError(f"blob {oid} is missing from the object database")

    def read_blobs(self, oids: Iterable[str], *, missing_ok: bool = False) -> dict[str, bytes]:
        """Many blobs through the one `cat-file` (see `iter_blobs`), by id."""
        return dict(self.iter_blobs(oids, missing_ok=missing_ok))

    def commit_parents(self, oid: str) -> list[str]:
        """The parents of commit `oid`, read from its object."""
        found = self.read_object(oid)
        if found is None or found[0] != "commit":
            raise GitError(f"commit {oid} is missing from the object database")
        parents = []
        for line in found[1].split(b"\n"):
            if not line:
                break
            if line.startswith(b"parent "):
                parents.append(line[7:].decode("ascii"))
        return parents

    def commit_tree(self, oid: str) -> str:
        """The root tree id of commit `oid` (of a tag of one, or of a tree: itself)."""
        return self._root_tree(oid)


_path_of = operator.attrgetter("path")


def _full_ids(oids: Iterable[str]) -> list[str]:
    """The ids, each checked to be a full object id (cat-file would resolve a name)."""
    wanted = list(oids)
    for oid in wanted:
        if not HEX_ID_RE.match(oid):
            raise GitError(f"not a full object id: {oid[:80]!r}")
    return wanted


def _first_line(text: object) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    # GitPython prefixes stderr with "stderr: '"; keep git's own words
    return lines[0].removeprefix("stderr: '").rstrip("'") if lines else ""


def run_git(cwd: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`git ARGS` in `cwd` outside any GitRepo (init, push): exit code and combined output."""
    import git

    try:
        status, out, err = git.Git(cwd).execute(
            ["git", *args],
            with_extended_output=True,
            with_exceptions=False,
            env={**(env or {}), **PATHSPECS_AS_WRITTEN},
        )
    except git.GitCommandNotFound:
        raise GitError("git is not installed or not on PATH") from None
    return int(status), "\n".join(part for part in (out, err) if part)
