"""When a `git restore` or `git checkout` of paths may be checked before it runs. Pure.

Such a command writes the paths it names from the index or from a revision, and
writes nothing new where the work tree already holds what that source does. The
agent hook can check that for the protected paths before the command runs
(`app/agent_restore.py`), but only against the index, HEAD and refs as they are
then: so the check stands only for a restore that runs before anything else in
its line could change them.

A line qualifies when it is a plain sequence (`;`, `&&`, `||`, newlines: no
pipe, background job, subshell, substitution, loop, condition, group or
function, which run their parts in another order or more than once), read to
the end, and every command before the restore is one of a few that change
nothing (`cd`, `echo`, `ls`, `git status`, `git diff`, `git log` …, with no
output written anywhere but /dev/null). The restore itself is `git` run
directly: no wrapper, no variable set for it, no option of git's own before
its subcommand, no output redirected into a file. Any other restore keeps
`Restore.void`, saying why, and is judged as any write is.
"""

from __future__ import annotations

from collections.abc import Sequence

from failgate_hooks.core.agent.command_git_writes import voided
from failgate_hooks.core.agent.command_rules import basename
from failgate_hooks.core.agent.command_state import ScanState
from failgate_hooks.core.agent.command_words import _shown
from failgate_hooks.core.agent.shell_lexer import WRITE_REDIRECTS, Command, Word

# What may run before a restore in its line: commands that change no file, and
# git's commands that read.
_INERT = frozenset({"cd", "pushd", "popd", "pwd", "echo", "printf", "true", ":", "ls", "test",
                    "["})  # fmt: skip
_READING_GIT = frozenset({"status", "diff", "log", "show", "ls-files", "rev-parse"})
# The git commands whose writes the hook can check before they run.
_CHECKED = frozenset({"restore", "checkout", "reset", "read-tree"})
# How a command may end and still be followed by the next only once it has finished.
_SEQUENTIAL = frozenset({"", ";", "&&", "||", "\n"})


def structure(commands: Sequence[Command]) -> str | None:
    """Why the commands of a line may not run one after the other, once each; None if
    they do."""
    for cmd in commands:
        if cmd.nested:
            return "the line runs commands in a substitution"
        if cmd.piped or cmd.end in ("|", "|&"):
            return "the line runs commands in a pipeline, side by side"
        if cmd.end == "&":
            return "the line runs a command in the background"
        if cmd.end not in _SEQUENTIAL:
            return "the line runs commands in a subshell, a function or a case"
    return None


def settle(
    state: ScanState,
    start: int,
    cmd: Command,
    words: Sequence[Word],
    depth: int,
    *,
    plain: bool,
) -> None:
    """After one command of the line: void each restore it made that cannot be checked
    before it runs, and remember it when it could change what git holds.

    `start` is where its writes begin in `state.writes`; `words` are its words after
    any keyword and assignment; `plain` is False when it set a variable."""
    made = state.writes[start:]
    if any(t.restore is not None for t in made):
        why = _why_unchecked(state, cmd, words, depth, plain=plain)
        if why is not None:
            state.writes[start:] = voided(made, why)
    if state.stirred is None and not _inert(cmd, words, plain=plain):
        state.stirred = " ".join(_shown(w) for w in words[:2]) or "a redirection"


def _why_unchecked(
    state: ScanState, cmd: Command, words: Sequence[Word], depth: int, *, plain: bool
) -> str | None:
    if depth > 0:
        return "it runs in a command line of its own (a shell's -c, eval, an alias, a hook)"
    if not plain:
        return "a variable is set for it"
    if not words or words[0].dynamic or basename(words[0].text) != "git":
        return f"it runs through {_shown(words[0])}" if words else "it is not run by git"
    if len(words) < 2 or words[1].text not in _CHECKED:
        # `git bisect run git restore .`: run by another git command, after its own work
        return f"it runs through git {_shown(words[1])}" if len(words) > 1 else "it is not run"
    if not _quiet(cmd):
        return "its output is written into a file"
    if state.stirred is not None:
        return f"`{state.stirred}` runs before it in the line and could change what git holds"
    return None


def _inert(cmd: Command, words: Sequence[Word], *, plain: bool) -> bool:
    if not plain or not _quiet(cmd) or not words or words[0].dynamic:
        return False
    name = basename(words[0].text)
    if name in _INERT:
        return True
    return (
        name == "git"
        and len(words) > 1
        and words[1].text in _READING_GIT
        and not any(w.text.startswith("--output") for w in words)
    )


def _quiet(cmd: Command) -> bool:
    """Whether it writes no file but /dev/null through its redirections."""
    return all(
        r.op not in WRITE_REDIRECTS or r.target is None or r.target.text == "/dev/null"
        for r in cmd.redirects
    )
