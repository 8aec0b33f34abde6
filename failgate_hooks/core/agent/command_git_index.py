"""Which index entries git's own commands rewrite, without writing the work tree. Pure.

Where pre-commit runs the gate, the index decides as much as the work tree:
at a push, pre-commit's stash of unstaged files writes what the index holds
for `.pre-commit-config.yaml` into the work tree while it runs, and
`--assume-unchanged` hides the difference from its check. So a command that
could leave the index entry of a protected path other than the work tree's
file is judged as a write of that path (`WriteTarget.index_only`).

`git reset [REV] [--] [PATHS]` makes the entries of its pathspecs (all of them
with none) REV's (HEAD's), which the agent hook compares with the work tree as
it compares a restore (`Restore`): `git reset` proceeds when HEAD holds what
the work tree does. `git add` stages the work tree's own content and is not
judged, but with `-p`, `-i`, `-e`, `-N` or `--chmod` it stages something else.
`git update-index` of a protected path is judged whatever its options (an
object id, a mode or a flag that hides the file), and `git apply --cached`,
`--index` or `--3way` writes what a patch holds, unseen here: all the index.
`git restore --staged`, `git rm --cached`, `git read-tree` and `git stash
apply --index` are in `command_git_writes.py`, beside their work-tree forms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from failgate_hooks.core.agent.command_git_writes import (
    WHOLE_REPOSITORY,
    ParsedOptions,
    given,
    parse_options,
    plain_revision,
    reached,
    targets_of,
)
from failgate_hooks.core.agent.command_writes import Restore, WriteTarget
from failgate_hooks.core.agent.shell_lexer import Word

# A word with a wildcard and none of the marks a revision's search needs (`:/x`, `^{/x}`).
_GLOB_ONLY = re.compile(r"[^:{]*[*?\[][^:{]*")
INDEX_WRITERS = frozenset({"add", "reset", "update-index", "apply"})

# A reset whose rewrite of the index the agent hook can compare before it runs.
_PLAIN_RESET = frozenset({"-q", "--quiet", "--no-quiet", "--mixed", "--refresh", "--no-refresh"})
# Options of a reset that leave the index alone (`--soft`), or move the whole work tree
# with it to a commit (`--hard`, `--keep`, `--merge`: not judged, as a checkout is not).
_NOT_THE_INDEX_ALONE = ("--soft", "--hard", "--keep", "--merge")
# `git add` options after which it stages other than the work tree's content.
_ADD_OTHERWISE = (("-p", "--patch"), ("-i", "--interactive"), ("-e", "--edit"),
                  ("-N", "--intent-to-add"), ("", "--chmod"))  # fmt: skip


def index_writes(name: str, args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """The paths whose index entries `git NAME ARGS`, run in `cwd`, may set apart from
    the work tree's files."""
    if name == "update-index":
        targets = _update_index(args, cwd)
    elif name == "apply":
        parsed = parse_options(args, "pC", ("--directory", "--include", "--exclude"))
        index = given(parsed, "", "--cached") or given(parsed, "", "--index")
        index = index or given(parsed, "-3", "--3way")
        targets = [reached(WHOLE_REPOSITORY, cwd)] if index else []
    elif name == "add":
        parsed = parse_options(args, "", ("--chmod", "--pathspec-from-file"))
        if not any(given(parsed, short or long, long) for short, long in _ADD_OTHERWISE):
            return []
        paths = parsed.before + (parsed.after or [])
        targets = targets_of(paths or [Word(WHOLE_REPOSITORY)], parsed, cwd)
    else:
        targets = _reset(args, cwd)
    return [t._replace(index_only=True) for t in targets]


def _reset(args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """`git reset [REV] [--] [PATHS]`: each reading git may make of its words, with the
    revision each rewrites the entries from."""
    parsed = parse_options(args, "", ())
    if any(given(parsed, "", option) for option in _NOT_THE_INDEX_ALONE):
        return []
    plain = parsed.flags <= _PLAIN_RESET and not any(w.dynamic for w in args)
    if parsed.after is not None:  # `[REV] -- PATHS`
        if len(parsed.before) > 1:  # not a form git reads as revision and paths
            return targets_of(parsed.before + parsed.after, parsed, cwd)
        source = parsed.before[0].text if parsed.before else "HEAD"
        return _from(source, parsed.after, parsed, cwd, plain=plain)
    if not parsed.before:
        return _from("HEAD", [], parsed, cwd, plain=plain)
    # No `--`: the first word is a revision when it names one, and a path otherwise.
    first, rest = parsed.before[0], parsed.before[1:]
    as_paths = _from("HEAD", parsed.before, parsed, cwd, plain=plain)
    if not first.dynamic and (
        first.text.startswith((".", "/")) or _GLOB_ONLY.fullmatch(first.text)
    ):
        return as_paths  # no revision is written so
    as_revision = _from(first.text, rest, parsed, cwd, plain=plain, or_a_path=True)
    return as_paths + as_revision


def _from(
    source: str,
    paths: list[Word],
    parsed: ParsedOptions,
    cwd: str | None,
    *,
    plain: bool,
    or_a_path: bool = False,
) -> list[WriteTarget]:
    """The pathspecs (the whole index with none) rewritten from `source`, checkable
    before the command runs when the reset is plain."""
    targets = targets_of(paths, parsed, cwd) if paths else [reached(WHOLE_REPOSITORY, cwd)]
    if not plain or parsed.from_file or not plain_revision(source):
        return targets
    restore = Restore(source, source_or_path=or_a_path)
    return [t._replace(restore=restore) for t in targets]


def _update_index(args: Sequence[Word], cwd: str | None) -> list[WriteTarget]:
    """Every path `git update-index` names (not pathspecs: no magic), the one a
    `--cacheinfo MODE,OID,PATH` sets, and all of the index with `--index-info` or
    `--stdin`, which read their paths from the input."""
    paths: list[Word] = []
    options = True
    for word in args:
        text = word.text
        if options and text == "--":
            options = False
        elif options and (text in ("--index-info", "--stdin") or word.dynamic):
            paths.append(Word(WHOLE_REPOSITORY))  # an option computed by the shell: any
        elif not options or not text.startswith("-"):
            paths.append(word)
            if "," in text:  # a `--cacheinfo` value, or a path with a comma: both are judged
                paths.append(Word(text.split(",", 2)[-1], word.dynamic))
    return [reached(w.text, cwd) for w in paths]
