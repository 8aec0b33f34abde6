"""Git for verifier checkouts: a private git dir that obeys failgate, never the user's config.

Pushed code runs in these checkouts, so git there must do exactly what failgate
asks: no hook, no filter (a smudge filter such as git-crypt's or LFS's would run
on the pushed tree), no line-ending or encoding conversion, no submodule
recursion, and a stat check that compares ctime, which a verifier cannot set
back. The git dir borrows the repository's objects (or the pre-receive
quarantine's) through alternates and writes none of its own.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.core.errors import GitError
from failgate_hooks.git.changes import parse_raw
from failgate_hooks.git.repo import FAITHFUL_HISTORY, PATHSPECS_AS_WRITTEN, GitRepo
from failgate_hooks.git.trees import parse_ls_tree

# On every command line: nothing in any config file can override these.
_FORCED_CONFIG = (
    "core.bare=false",
    f"core.hooksPath={os.devnull}",
    f"core.attributesFile={os.devnull}",
    f"core.excludesFile={os.devnull}",
    "core.trustctime=true",
    "core.checkStat=default",
    "core.ignoreStat=false",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.ignoreCase=false",
    "core.precomposeUnicode=false",
    "core.untrackedCache=false",
    "core.fsmonitor=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "index.sparse=false",
    "index.version=2",
    "feature.manyFiles=false",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
)

# The attributes under which git writes a file other than its blob (and reads it back
# as the blob): line endings, encodings, $Id$ and filter drivers.
CONVERSION_ATTRIBUTES = ("text", "crlf", "eol", "filter", "ident", "working-tree-encoding")
# $GIT_DIR/info/attributes outranks every .gitattributes in the tree.
ATTRIBUTES = "* " + " ".join(f"-{name}" for name in CONVERSION_ATTRIBUTES) + "\n"

_TREE, _GITLINK = "040000", "160000"


class Shape(NamedTuple):
    """A commit's folders and its submodule paths (folders in a checkout too), relative."""

    folders: frozenset[str]
    gitlinks: frozenset[str]


def object_dirs(repo: GitRepo) -> list[str]:
    """Where `repo`'s objects are, as its own git commands see them (a quarantine included).

    Inside pre-receive, git points GIT_OBJECT_DIRECTORY at the quarantine and
    lists the repository's own objects in GIT_ALTERNATE_OBJECT_DIRECTORIES."""
    own = os.environ.get("GIT_OBJECT_DIRECTORY") or os.path.join(repo.common_dir, "objects")
    dirs = [os.path.abspath(own)]
    inherited = os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES")
    if inherited:
        dirs.append(inherited)  # already in git's own list syntax: passed on as it is
    return dirs


def _quote_object_dir(path: str) -> str:
    """One entry of GIT_ALTERNATE_OBJECT_DIRECTORIES: a path holding `:` is C-quoted."""
    if ":" not in path and not path.startswith('"'):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


class CheckoutGit:
    """A private git dir (`git_dir`) whose commands read objects from `objects`.

    `home` is an empty folder given to git as HOME and XDG_CONFIG_HOME, so even a
    git too old for GIT_CONFIG_GLOBAL finds no user config, attributes or ignores."""

    def __init__(self, git_dir: str, objects: Sequence[str], home: str) -> None:
        self.git_dir = git_dir
        self.home = home
        own = [_quote_object_dir(objects[0])] if objects else []
        self._alternates = ":".join([*own, *objects[1:]])

    def ensure(self, object_format: str) -> None:
        """Create the git dir (in `object_format`) when missing; rewrite its attributes if changed.

        Written directly rather than by `git init`, which would read a template folder."""
        os.makedirs(self.home, exist_ok=True)
        if not os.path.isfile(os.path.join(self.git_dir, "HEAD")):
            for folder in ("objects", "refs", "info"):
                os.makedirs(os.path.join(self.git_dir, folder), exist_ok=True)
            with open(os.path.join(self.git_dir, "config"), "w", encoding="utf-8") as handle:
                handle.write(_config_text(object_format))
            with open(os.path.join(self.git_dir, "HEAD"), "w", encoding="utf-8") as handle:
                handle.write("ref: refs/heads/main\n")
        attributes = os.path.join(self.git_dir, "info", "attributes")
        try:
            with open(attributes, encoding="utf-8") as handle:
                if handle.read() == ATTRIBUTES:
                    return
        except (OSError, UnicodeDecodeError):
            pass
        os.makedirs(os.path.dirname(attributes), exist_ok=True)
        with open(attributes, "w", encoding="utf-8") as handle:
            handle.write(ATTRIBUTES)

    def move(self, work_tree: str, index: str, commit: str) -> None:
        """One-way `read-tree --reset -u`: the index becomes `commit`'s, the work tree follows.

        Every entry whose stat data differs from the index (ctime included) is
        written again; files in the way are overwritten. Never a two-way merge:
        that carries an edit forward where the path did not change."""
        self._run(work_tree, "read-tree", "--reset", "-u", commit, work_tree=work_tree, index=index)

    def store_trees(self, trees: Sequence[bytes]) -> None:
        """Write each tree object (its content, as `cat-file tree` shows it) into this
        git dir's objects: trees made for a checkout, which no repository holds."""
        for content in trees:
            self._run(self.home, "hash-object", "-w", "-t", "tree", "--stdin", stdin=content)

    def clean(self, work_tree: str, index: str, folders: Sequence[str] | None = None) -> None:
        """Remove everything the index does not hold: untracked, ignored, nested repositories.

        With `folders` (relative paths, never the root), only their own entries:
        an untracked folder among them may be left empty."""
        spec = [] if folders is None else ["--", *_pathspecs_in(folders)]
        self._run(work_tree, "clean", "-ffdxq", *spec, work_tree=work_tree, index=index)

    def shape(self, commit: str) -> Shape:
        """`commit`'s folders and submodule paths, from one listing of its whole tree."""
        out = self._run(self.home, "ls-tree", "-r", "-t", "-z", "--full-tree", commit)
        folders: set[str] = set()
        gitlinks: set[str] = set()
        for entry in parse_ls_tree(out):
            if entry.mode in (_TREE, _GITLINK):
                (folders if entry.mode == _TREE else gitlinks).add(entry.path)
        return Shape(frozenset(folders), frozenset(gitlinks))

    def reshape(self, shape: Shape, old: str, new: str) -> Shape:
        """`new`'s shape from `old`'s, through a tree diff; GitError when `old` is gone.

        The diff skips the subtrees the commits share: it costs what changed."""
        out = self._run(
            self.home, "diff-tree", "-r", "-t", "-z", "--no-renames", "--no-abbrev", old, new
        )
        folders, gitlinks = set(shape.folders), set(shape.gitlinks)
        for change in parse_raw(out):
            for mode, paths in ((_TREE, folders), (_GITLINK, gitlinks)):
                if change.old_mode == mode and change.new_mode != mode:
                    paths.discard(change.path)
                elif change.new_mode == mode and change.old_mode != mode:
                    paths.add(change.path)
        return Shape(frozenset(folders), frozenset(gitlinks))

    def _env(self, work_tree: str, index: str) -> dict[str, str]:
        """Every variable that could point git elsewhere, pointed here (git's own hook
        variables, a user's GIT_CONFIG_PARAMETERS from `git -c … push`)."""
        return {
            "GIT_DIR": self.git_dir,
            "GIT_COMMON_DIR": self.git_dir,
            "GIT_WORK_TREE": work_tree,
            "GIT_INDEX_FILE": index,
            "GIT_OBJECT_DIRECTORY": os.path.join(self.git_dir, "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": self._alternates,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_SYSTEM": os.devnull,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_PARAMETERS": "",
            "GIT_CONFIG_COUNT": "0",
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_INDEX_VERSION": "2",
            "GIT_LFS_SKIP_SMUDGE": "1",
            **FAITHFUL_HISTORY,
            **PATHSPECS_AS_WRITTEN,  # `clean`'s `:(top,glob)` pathspecs mean what they say
            "HOME": self.home,
            "XDG_CONFIG_HOME": self.home,
        }

    def _run(
        self,
        cwd: str,
        *args: str,
        work_tree: str | None = None,
        index: str | None = None,
        stdin: bytes | None = None,
    ) -> str:
        """`git ARGS` in `cwd` with the private environment; its output, or a GitError."""
        import git

        env: Mapping[str, str] = self._env(
            work_tree or self.home, index or os.path.join(self.git_dir, "index")
        )
        argv = ["git"]
        for setting in _FORCED_CONFIG:
            argv += ["-c", setting]
        with contextlib.ExitStack() as stack:
            given = None
            if stdin is not None:  # GitPython hands the process a file
                given = stack.enter_context(tempfile.TemporaryFile())
                given.write(stdin)
                given.seek(0)
            try:
                status, out, err = git.Git(cwd).execute(
                    [*argv, *args],
                    env=env,
                    istream=given,
                    with_extended_output=True,
                    with_exceptions=False,
                    stdout_as_string=False,
                )
            except git.GitCommandNotFound:
                raise GitError("git is not installed or not on PATH") from None
        if status != 0:
            text = err.decode("utf-8", "replace") if isinstance(err, bytes) else str(err)
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            raise GitError(f"git {args[0]} in a verifier checkout failed: {first or status}")
        return bytes(out).decode("utf-8", "surrogateescape")


def _pathspecs_in(folders: Sequence[str]) -> Iterator[str]:
    """A pathspec for each folder's own entries (a glob's `*` stops at `/`)."""
    for folder in folders:
        yield ":(top,glob)" + re.sub(r"([*?\[\\])", r"\\\1", folder) + "/*"


def _config_text(object_format: str) -> str:
    """A bare git dir's config in `object_format`: SHA-256 needs format version 1."""
    if object_format == "sha1":
        return "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
    return (
        "[core]\n\trepositoryformatversion = 1\n\tbare = true\n"
        f"[extensions]\n\tobjectformat = {object_format}\n"
    )
