"""`failgate install` / `uninstall`: the plain git pre-push hook.

The hook is marked as failgate's, so that failgate never replaces or removes
a hook it did not write (as gitlint and pre-commit do). It names an absolute
interpreter and fails closed — refuses the push with a message — when that
interpreter or failgate itself is gone.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys

from failgate_hooks.core.errors import UsageError
from failgate_hooks.git.repo import GitRepo

MARKER = "# failgate-managed-hook v1"
HOOK = "pre-push"
# The hook that was here first, kept and run first. Never pre-commit's name
# (pre-push.legacy): pre-commit's own hook runs a pre-push.legacy beside it, so a
# pre-commit hook kept under that name ran itself in "migration mode".
CHAINED = "pre-push.before-failgate"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
PRE_COMMIT_HOOK_ID = "id: failgate"

_RUN_FAILGATE = """\
import sys
try:
    from failgate_hooks.commands.hooks import pre_push_main
except ImportError as exc:
    sys.stderr.write(
        "failgate: cannot import failgate (%s): push refused.\\n"
        "  hint: reinstall failgate in that environment, or run failgate uninstall\\n" % exc
    )
    sys.exit(1)
pre_push_main(sys.argv[1:])
"""


# How the hook starts Python: `-E` ignores PYTHONPATH and every other PYTHON* variable
# of the push's environment, `-P` keeps the current folder (git runs the hook in the
# work tree's root) off sys.path. Either would let a folder named like failgate's
# package answer for failgate, and the push would pass.
_ISOLATED = "-E -P"


def hook_script(python: str, *, chained: bool) -> str:
    """The text of the hook: chained legacy hook first (same stdin), then failgate."""
    py = shlex.quote(python)
    lines = [
        "#!/bin/sh",
        MARKER,
        "# Written by `failgate install`; `failgate uninstall` removes it.",
        f"FAILGATE_PYTHON={py}",
        'if [ ! -x "$FAILGATE_PYTHON" ]; then',
        '    echo "failgate: the hook\'s interpreter $FAILGATE_PYTHON is gone: push refused." >&2',
        '    echo "  hint: reinstall failgate and run failgate install, or failgate uninstall" >&2',
        "    exit 1",
        "fi",
    ]
    if chained:
        lines += [
            # the hook that was here first runs first, and sees the same stdin
            f'legacy="$(dirname "$0")/{CHAINED}"',
            'input="$(mktemp)" || exit 1',
            "trap 'rm -f \"$input\"' EXIT",
            'cat > "$input"',
            'if [ -x "$legacy" ]; then',
            '    "$legacy" "$@" < "$input" || exit $?',
            "fi",
            f'"$FAILGATE_PYTHON" {_ISOLATED} -c {shlex.quote(_RUN_FAILGATE)} "$@" < "$input"',
        ]
    else:
        lines.append(f'exec "$FAILGATE_PYTHON" {_ISOLATED} -c {shlex.quote(_RUN_FAILGATE)} "$@"')
    return "\n".join(lines) + "\n"


def hooks_dir(repo: GitRepo) -> str:
    """Where git looks for hooks: core.hooksPath when set, else the common dir's hooks."""
    found = repo.run("rev-parse", "--git-path", "hooks")
    base = repo.working_dir or repo.git_dir
    return os.path.abspath(os.path.join(base, found))


def is_ours(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return MARKER in handle.read(4096)
    except FileNotFoundError:
        return False


def not_as_written(path: str) -> str | None:
    """Why failgate's hook at `path` would not decide a push as `install` writes it; None
    when it would. git skips a hook that is not executable; text after the marker can
    pass every push."""
    if not os.access(path, os.X_OK):
        return "is not executable, so git skips it and every push goes out unchecked"
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    assigned = [line for line in text.splitlines() if line.startswith("FAILGATE_PYTHON=")]
    try:
        words = shlex.split(assigned[0].partition("=")[2]) if len(assigned) == 1 else []
    except ValueError:
        words = []
    chained = os.path.exists(os.path.join(os.path.dirname(path), CHAINED))
    if len(words) != 1 or text != hook_script(words[0], chained=chained):
        return "differs from what failgate install writes (edited, or written by an older failgate)"
    return None


def install(repo: GitRepo, *, chain: bool) -> str:
    """Write the hook; refuse a foreign one unless `chain` keeps it (CHAINED) to run first."""
    folder = hooks_dir(repo)
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, HOOK)
    legacy = os.path.join(folder, CHAINED)
    chained = os.path.exists(legacy)
    if os.path.lexists(target) and not is_ours(target):
        if not chain:
            under_pre_commit = (
                ""
                if pre_commit_names_failgate(repo)
                else f" (under pre-commit, add failgate's hook id to {PRE_COMMIT_CONFIG} instead)"
            )
            raise UsageError(
                f"{target} exists and was not written by failgate; nothing was changed",
                hint=f"run failgate install --chain to keep it as {CHAINED} and run it first"
                + under_pre_commit,
            )
        if os.path.lexists(legacy):
            raise UsageError(f"{legacy} already exists; move it away first")
        os.rename(target, legacy)
        chained = True
    write_replacing(target, hook_script(sys.executable, chained=chained), executable=True)
    return target


def pre_commit_names_failgate(repo: GitRepo) -> bool:
    """Whether the work tree's .pre-commit-config.yaml names failgate's hook id."""
    root = repo.working_dir
    config = os.path.join(root, PRE_COMMIT_CONFIG) if root else None
    if config is None or not os.path.exists(config):
        return False
    with open(config, encoding="utf-8", errors="replace") as handle:
        return PRE_COMMIT_HOOK_ID in handle.read()


def in_work_tree_warning(repo: GitRepo, folder: str) -> str | None:
    """A warning when the hooks folder is in the work tree (core.hooksPath = .githooks),
    where teams commit it: the hook names this machine's Python, which others lack."""
    root = repo.working_dir
    if root is None or not _inside(folder, root):
        return None
    if _inside(folder, repo.git_dir) or _inside(folder, repo.common_dir):
        return None
    shown = os.path.relpath(os.path.join(folder, HOOK), root)
    return (
        f"warning: {shown} is in the work tree (core.hooksPath), and the hook names this "
        f"machine's Python ({sys.executable}): do not commit it, or every other clone's "
        "push is refused. Each clone runs failgate install, or the team uses pre-commit "
        "(README)."
    )


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def uninstall(repo: GitRepo) -> str:
    """Remove failgate's hook only, restoring a chained one; say what was done."""
    folder = hooks_dir(repo)
    target = os.path.join(folder, HOOK)
    legacy = os.path.join(folder, CHAINED)
    if not os.path.lexists(target):
        return f"no pre-push hook in {folder}; nothing to do"
    if not is_ours(target):
        raise UsageError(f"{target} was not written by failgate; it was left as it is")
    os.unlink(target)
    if os.path.lexists(legacy):
        os.rename(legacy, target)
        return f"removed failgate's hook and restored the previous one at {target}"
    return f"removed {target}"


def write_replacing(path: str, text: str, *, executable: bool = False) -> None:
    """Write-then-rename: whoever reads the file (git, an agent) sees the old one or the new."""
    temp = f"{path}.failgate-tmp"
    if os.path.lexists(temp):
        os.unlink(temp)  # a leftover, or a link a cloned repository holds: never written through
    with open(temp, "x", encoding="utf-8") as handle:  # O_EXCL: a link made since fails
        handle.write(text)
    if executable:
        os.chmod(temp, os.stat(temp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(temp, path)


def evidence_fetch(repo: GitRepo, *, add: bool) -> str | None:
    """Add (or remove) the refspec that fetches the default remote's evidence; what was done."""
    from failgate_hooks.git import evidence
    from failgate_hooks.git.remotes import default_remote

    remote = default_remote(repo)
    if remote is None:
        return None
    if add and evidence.add_fetch_refspec(repo, remote):
        return f"git fetch {remote} now brings its evidence into {evidence.tracking_ref(remote)}"
    if not add and evidence.remove_fetch_refspec(repo, remote):
        return f"git fetch {remote} no longer brings its evidence"
    return None
