"""The watcher, run as `sitecustomize` in every Python a verifier starts.

failgate never runs this module: worktree_loads.py copies it, as
`sitecustomize.py`, into a private folder that it puts first on the verifier's
PYTHONPATH. Python imports it at start-up, before the verifier's own code. It
puts a finder first on `sys.meta_path` that asks the finders after it and,
for each module they find:

- records one found in a user's work tree (FAILGATE_WORK_TREES, one a line)
  in FAILGATE_LOAD_LOG, as `name NUL path NUL`;
- lets one of installed code read the bytecode Python cached beside it. The
  verifier's PYTHONPYCACHEPREFIX is a private folder, so that no `.pyc` in
  the checkout stands in for its source; without this, every module of the
  standard library and site-packages would be compiled again in every run.

Then it loads the sitecustomize that would have run without it, so a
project's or an interpreter's own one still does. Nothing in the checkout
(FAILGATE_CHECKOUT) or in this module's folder is recorded or shared.

It runs on whatever Python the verifier uses: it keeps to Python 3.7 and the
modules `site` has already imported, and it imports nothing of failgate's.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at start-up: it would slow every Python
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

LOG_VARIABLE = "FAILGATE_LOAD_LOG"
WORK_TREES_VARIABLE = "FAILGATE_WORK_TREES"
CHECKOUT_VARIABLE = "FAILGATE_CHECKOUT"
# The verifier cannot judge: as verify/execute.py's NO_VERDICT_EXIT, `git bisect run`'s skip.
_NO_VERDICT_EXIT = 125


def is_within(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies in it, both as given (resolve them first)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class LoadWatcher:
    """First on `sys.meta_path`: finds each module as the import system would, and looks
    at where it was found."""

    def __init__(self, log: str, work_trees: list[str], private: list[str]) -> None:
        self._log = log
        self._work_trees = work_trees
        self._private = private
        # Installed code is not the work tree's, even in a venv kept inside it: the
        # interpreter's prefixes and the user's site-packages, unless one holds a tree.
        self._installed = [
            folder
            for folder in _installed_code_folders()
            if not any(is_within(tree, folder) for tree in work_trees)
        ]
        self._seen: set[str] = set()

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        finders = sys.meta_path
        after_me = finders[finders.index(self) + 1 :] if self in finders else finders
        for finder in after_me:
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                # A finder of the old protocol: the import system asks it, and those
                # after it, itself; what it finds is seen by the sweep at exit.
                return None
            spec: ModuleSpec | None = find_spec(name, path, target)
            if spec is not None:
                if spec.has_location and isinstance(spec.origin, str):
                    self.note(name, spec.origin, share_bytecode=True)
                return spec
        return None

    def note(self, name: str, origin: object, *, share_bytecode: bool = False) -> None:
        """Look at `origin`, a file `name` was loaded from: record it when it lies in a
        work tree; with `share_bytecode`, let installed code read its cached bytecode."""
        if not isinstance(origin, str) or not origin:
            return
        path = os.path.realpath(origin)
        if path in self._seen:
            return
        self._seen.add(path)
        if any(is_within(path, folder) for folder in self._private):
            return
        installed = any(is_within(path, folder) for folder in self._installed)
        if installed and share_bytecode:
            _share_cached_bytecode(origin)
        elif not installed and any(is_within(path, tree) for tree in self._work_trees):
            self._record(name, path)

    def _record(self, name: str, path: str) -> None:
        record = os.fsencode(name) + b"\0" + os.fsencode(path) + b"\0"
        try:
            fd = os.open(self._log, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, record)
            finally:
                os.close(fd)
        except OSError as exc:
            # Unrecorded, the load would look like none: end this Python without a verdict.
            sys.stderr.write(
                f"failgate: {name} was loaded from the work tree ({path}) and cannot be "
                f"recorded in {self._log}: {exc}; no verdict\n"
            )
            sys.stderr.flush()
            os._exit(_NO_VERDICT_EXIT)

    def sweep(self) -> None:
        """Note every module already loaded: by `.pth` files before this ran, or by a
        finder ahead of this one."""
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.has_location:
                self.note(name, spec.origin)
            else:
                self.note(name, getattr(module, "__file__", None))


def _share_cached_bytecode(source: str) -> None:
    """Link the private cache's entry for `source` to the bytecode beside it, if any.

    Python validates it against the source as always, and writes a new one as a
    new file in place of the link: nothing is ever written through it."""
    if not source.endswith(".py") or sys.pycache_prefix is None:
        return
    private = sys.modules["_frozen_importlib_external"].cache_from_source(source)
    beside = os.path.join(os.path.dirname(source), "__pycache__", os.path.basename(private))
    try:
        if os.path.isfile(beside) and not os.path.lexists(private):
            os.makedirs(os.path.dirname(private), exist_ok=True)
            os.symlink(beside, private)
    except OSError:
        pass  # compiled afresh instead


def _installed_code_folders() -> list[str]:
    folders = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    site = sys.modules.get("site")
    if site is not None and getattr(site, "ENABLE_USER_SITE", False):
        folders.append(site.getusersitepackages())
    return [os.path.realpath(folder) for folder in folders if folder]


def _script(argv: list[str]) -> str | None:
    """The file `python FILE` runs. Python sets `__main__.__file__` only while it
    runs, so no sweep at exit sees it; sys.argv names it from the start."""
    if argv and argv[0] not in ("", "-", "-c", "-m") and os.path.isfile(argv[0]):
        return argv[0]
    return None


def _load_the_next_sitecustomize(here: str) -> None:
    """Import the sitecustomize that comes after `here`, this one's folder, on sys.path."""
    sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    me = sys.modules.pop("sitecustomize", None)
    try:
        __import__("sitecustomize")  # the project's, or the interpreter's own
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise
        # site imported this module as sitecustomize and expects to find it there
        sys.modules["sitecustomize"] = me  # type: ignore[assignment]


def install() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    log = os.environ.get(LOG_VARIABLE, "")
    work_trees = [tree for tree in os.environ.get(WORK_TREES_VARIABLE, "").split("\n") if tree]
    private = [os.path.realpath(os.path.dirname(here))]  # the run's folder, this one's parent
    if os.environ.get(CHECKOUT_VARIABLE):
        private.append(os.path.realpath(os.environ[CHECKOUT_VARIABLE]))
    watcher = LoadWatcher(log, work_trees, private)
    sys.meta_path.insert(0, watcher)
    watcher.sweep()
    watcher.note("__main__", _script(getattr(sys, "argv", [])))
    import atexit

    atexit.register(watcher.sweep)
    _load_the_next_sitecustomize(here)


if __name__ == "sitecustomize":
    install()
