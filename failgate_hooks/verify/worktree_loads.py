"""What a Python verifier loaded from the user's work tree: no verdict for commit C.

A verifier runs in a clean checkout of C, but the Python it runs may still
import the work tree's copy of a module: through an editable install
(`pip install -e .`, any build backend) or a PYTHONPATH naming the work tree.
Such a run tested the work tree, uncommitted edits and all, not C. What is
installed does not say whether that happens (a verifier may put the checkout's
copy first), so it is judged by what each run actually loaded: every Python
the verifier starts runs load_watcher.py first, as its `sitecustomize`, and
that watcher records each module it finds in a work tree. (failgate imports
the watcher only for the names of its variables and its is_within.)

Each run also gets a private PYTHONPYCACHEPREFIX, so no bytecode written by
another run, or committed as `__pycache__/*.pyc`, stands in for a source file
of the checkout; installed code still reads the bytecode cached beside it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import NamedTuple

from failgate_hooks.core.errors import GitError
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify import load_watcher

_WATCHER_SOURCE = os.path.join(os.path.dirname(__file__), "load_watcher.py")
# Enough for every module of a large program; what is beyond is not read.
_LOG_LIMIT = 1 << 20
_NAMED_IN_DETAIL = 3


class Load(NamedTuple):
    """One module a verifier's Python found in a work tree."""

    module: str
    path: str  # absolute, symlinks resolved
    work_tree: str


def work_trees(repo: GitRepo) -> list[str]:
    """Every work tree of the repository (the main one and each linked one), resolved."""
    trees = []
    for field in _worktree_fields(repo):
        if field.startswith("worktree "):
            trees.append(field[len("worktree ") :])
        elif field == "bare" and trees:
            trees.pop()  # a bare repository's entry names no work tree
    return [os.path.realpath(tree) for tree in trees]


def _worktree_fields(repo: GitRepo) -> list[str]:
    """`git worktree list --porcelain`, field by field.

    With -z: git writes a path as it is, and a newline in one would end its line there
    (`…/odd<newline>worktree /elsewhere` read as two work trees, neither of them it).
    A git before 2.36 has no -z; its lines are all there is."""
    try:
        return repo.run("worktree", "list", "--porcelain", "-z", strip=False).split("\0")
    except GitError:
        return repo.run("worktree", "list", "--porcelain").splitlines()


class LoadWatch:
    """One run's private folder: the watcher as sitecustomize, its log, the bytecode cache.

    `watched` are the work trees a load from which is reported; `checkout` is the
    folder the verifier runs in, never reported even when TMPDIR puts it in one.
    """

    def __init__(self, watched: Sequence[str], *, checkout: str) -> None:
        self._watched = [os.path.realpath(tree) for tree in watched]
        self._checkout = checkout
        self._folder: str | None = None

    def __enter__(self) -> LoadWatch:
        folder = tempfile.mkdtemp(prefix="failgate-python-")
        self._folder = folder
        os.mkdir(os.path.join(folder, "site"))
        shutil.copyfile(_WATCHER_SOURCE, os.path.join(folder, "site", "sitecustomize.py"))
        os.mkdir(os.path.join(folder, "pycache"))
        # Made here, so the watcher only appends: one that cannot is a no verdict.
        with open(self._log, "xb"):
            pass
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    @property
    def folder(self) -> str:
        """The run's private folder: the verifier must be able to write in it."""
        if self._folder is None:
            raise RuntimeError("LoadWatch used outside its `with` block")
        return self._folder

    @property
    def _log(self) -> str:
        return os.path.join(self.folder, "loads")

    def environ(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with the watcher first on PYTHONPATH and the private bytecode cache."""
        site = os.path.join(self.folder, "site")
        theirs = env.get("PYTHONPATH")
        return dict(
            env,
            PYTHONPATH=site + os.pathsep + theirs if theirs else site,
            PYTHONPYCACHEPREFIX=os.path.join(self.folder, "pycache"),
            **{
                load_watcher.LOG_VARIABLE: self._log,
                load_watcher.WORK_TREES_VARIABLE: "\n".join(self._watched),
                load_watcher.CHECKOUT_VARIABLE: self._checkout,
            },
        )

    def leak(self, commit: str) -> str | None:
        """Why the run gives no verdict on `commit`, or None: what it loaded from a work
        tree, or that what it loaded cannot be read in full."""
        try:
            loads = self.loads()
        except (OSError, ValueError) as exc:  # the verifier removed the log, or filled it
            return f"what its Python loaded cannot be read: {exc}"
        return leak_detail(loads, commit, self._checkout) if loads else None

    def loads(self) -> list[Load]:
        """What the verifier's Pythons loaded from a watched work tree, first seen first.

        Every field that names a file in a work tree counts, its module being the
        field before it, so nothing written between records can hide one."""
        with open(self._log, "rb") as log:
            data = log.read(_LOG_LIMIT + 1)
        if len(data) > _LOG_LIMIT:
            raise ValueError(f"its record is larger than the {_LOG_LIMIT} bytes failgate reads")
        fields = [os.fsdecode(field) for field in data.split(b"\0")]
        found: dict[str, Load] = {}
        for i, path in enumerate(fields):
            tree = next((t for t in self._watched if load_watcher.is_within(path, t)), None)
            if tree is not None:
                found.setdefault(path, Load(fields[i - 1] if i else "?", path, tree))
        return list(found.values())


def leak_detail(loads: Sequence[Load], commit: str, checkout: str) -> str:
    """The no-verdict reason: which module, from where, and how to make the verifier see C
    (whose checkout is `checkout`)."""
    named = ", ".join(f"{load.module} ({load.path})" for load in loads[:_NAMED_IN_DETAIL])
    if len(loads) > _NAMED_IN_DETAIL:
        named += f" and {len(loads) - _NAMED_IN_DETAIL} more"
    return (
        f"it imported {named} from the work tree, not from the checkout of "
        f"{short_id(commit)}: an editable install (pip install -e) or a PYTHONPATH points "
        f"its Python at your files, committed or not. {_fix(loads[0], commit, checkout)}"
    )


def _fix(load: Load, commit: str, checkout: str) -> str:
    """How the verifier imports the checkout's copy of `load` instead, or, when the
    checkout has none, that it must not import it."""
    relative = os.path.relpath(load.path, load.work_tree)
    shown = relative.replace(os.sep, "/")
    if load.module == "__main__":
        return f"To run the checkout's copy, name the script as {shown}, relative to it."
    if not os.path.lexists(os.path.join(checkout, relative)):
        # sys.path cannot help: an editable install's finder, asked after it, answers
        # for a module the checkout's package lacks
        return (
            f"The checkout of {short_id(commit)} has no {shown}, so no sys.path puts its "
            f"copy first: import only what every commit the verifier runs on holds (ask "
            "the checkout, os.getcwd(), which modules it has)."
        )
    entry = _import_root(load)
    if entry is None:
        return (
            f"To import the checkout's copy of {load.module}, put the folder holding it "
            "first on the verifier's sys.path."
        )
    first = f'sys.path.insert(0, "{entry}")' if entry else "sys.path.insert(0, os.getcwd())"
    return f"To import the checkout's copy, put {first} before the import in the verifier."


def _import_root(load: Load) -> str | None:
    """The folder, relative to the work tree, that holds `load`'s top-level package.

    "src" for pkg.sub at src/pkg/sub.py; "" for the tree's root; None when the
    path does not spell the module's name (a finder that maps it elsewhere)."""
    relative = os.path.relpath(load.path, load.work_tree).split(os.sep)
    names = load.module.split(".")
    if relative[-1].split(".")[0] == "__init__":
        relative = relative[:-1]
    else:
        relative[-1] = relative[-1].split(".")[0]
    if len(relative) < len(names) or relative[len(relative) - len(names) :] != names:
        return None
    return "/".join(relative[: len(relative) - len(names)])
