"""Single words and argument lists of a shell command, as the command scan reads them. Pure.

What one word assigns, what `env -S` splits and runs, the bypass flag of a push
and the commands git's options and URLs name for it to run (`--receive-pack`,
`--upload-pack`, `difftool -x`, an `ext::` URL), where a `cd` leaves the shell,
a word as a message shows it, and failgate's own commands that a person must
run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from failgate_hooks.core.agent.command_rules import (
    _ASSIGNMENT,
    Finding,
    Risk,
    RunOptions,
    relaxing_record,
)
from failgate_hooks.core.agent.shell_lexer import DYN, Word


def _assigned(word: Word) -> str | None:
    """The variable a `NAME=value` word assigns, when the shell reads it as one."""
    match = _ASSIGNMENT.match(word.prefix)
    return match.group(1) if match else None


def _env_split(args: list[Word], index: int) -> list[Word] | None:
    """The text `env -S` (`-vS…`, `--split-string=…`) splits and runs, when `args[index]` is it."""
    word = args[index]
    text = word.text
    option, eq, value = text.partition("=")
    if len(option) > 2 and "--split-string".startswith(option):  # a prefix env takes for it
        if eq:
            return [Word(value, word.dynamic)]
        return args[index + 1 : index + 2]
    if not text.startswith("-") or text.startswith("--") or word.dynamic:
        return None
    for position, flag in enumerate(text[1:], start=1):
        if flag in "uC":
            return None  # the rest is that option's value
        if flag == "S":
            value = text[position + 1 :]
            return [Word(value, word.dynamic)] if value else args[index + 1 : index + 2]
    return None


def _bypass_flag(args: list[Word]) -> str | None:
    """`--no-verify`, or a prefix git would take for it, before any `--`."""
    for word in args:
        if word.text == "--":
            return None
        if word.text.lower().startswith("--no-ve"):
            return word.text
    return None


def _moved(cwd: str | None, operands: Sequence[Word]) -> str | None:
    """Where a `cd` leaves the shell: unknown for `cd`, `cd -` and a home folder."""
    if not operands:
        return None
    target = operands[0].text
    if target == "-" or target.startswith("~"):
        return None
    if target.startswith("/"):
        return target
    return f"{cwd if cwd is not None else DYN}/{target}"


def _shown(word: Word) -> str:
    """A word for a message: what the shell computes shown as `…`."""
    text = word.text.replace(DYN, "…")
    return text if len(text) <= 60 else text[:57] + "…"


def _failgate(args: list[Word]) -> Finding | None:
    """failgate's commands that relax a gate or a verifier's trust: a person's to run."""
    words = [w.text for w in args]
    while words[:1] == ["-C"]:
        words = words[2:]
    sub = next((w for w in words if not w.startswith("-")), None)
    if sub is None:
        return None
    rest = words[words.index(sub) + 1 :]
    relaxing = (
        sub in ("expire", "confirm", "uninstall")
        or (sub == "trust" and "--yes" in rest)
        or (sub == "record" and relaxing_record(rest))
    )
    if relaxing:
        return Finding(Risk.RELAXING, " ".join(["failgate", sub, *rest[:1]]))
    elif sub == "agent" and rest[:1] in (["install"], ["uninstall"]):
        # it rewrites the agents' hook configuration, which could then run anything
        what = f"the agents' hook configuration (failgate agent {rest[0]})"
        return Finding(Risk.PROTECTED_WRITE, what)
    return None


def run_values(args: Sequence[Word], options: RunOptions) -> list[Word]:
    """The command lines a git command's options name for git to run (push's
    `--receive-pack=CMD`, fetch's `--upload-pack CMD`, clone's `-u CMD`, difftool's `-x
    CMD`): a long option as any prefix git could take for it, the short letter in a
    cluster, each with its value attached or next (only attached, when optional)."""
    out = []
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        following = [] if options.optional else list(args[index + 1 : index + 2])
        if text.startswith("--"):
            option, eq, value = text.partition("=")
            if len(option) > 3 and any(name.startswith(option) for name in options.longs):
                out += [Word(value, word.dynamic)] if eq else following
        elif options.letter and text.startswith("-") and not word.dynamic:
            for position, flag in enumerate(text[1:], start=1):
                attached = text[position + 1 :]
                if flag == options.letter:
                    out += [Word(attached)] if attached else following
                if flag in options.valued:
                    break  # the rest of the word is that option's value
    return out


def ext_urls(args: Sequence[Word]) -> list[Word]:
    """The `ext::` URLs among a git command's words, as operands or option values
    (`--remote=ext::…`)."""
    out = []
    for word in args:
        option, eq, value = word.text.partition("=")
        if word.text.startswith("ext::"):
            out.append(word)
        elif option.startswith("--") and eq and value.startswith("ext::"):
            out.append(Word(value, word.dynamic))
    return out


def ext_argv(url: str) -> list[Word]:
    """The argv of an `ext::` URL's command: words split at spaces, `% ` one space."""
    parts = url.removeprefix("ext::").replace("% ", "\x01").split(" ")
    return [Word(part.replace("\x01", " ").replace("%%", "%")) for part in parts if part]


def _pre_commit(args: list[Word]) -> Finding | None:
    """pre-commit's commands that take a pre-push hook out: `uninstall`, `install -f`."""
    words = [w.text for w in args]
    sub = next((w for w in words if not w.startswith("-")), None)
    overwrite = any(
        w == "--overwrite" or (w.startswith("-") and not w.startswith("--") and "f" in w)
        for w in words
    )
    if sub == "uninstall" or (sub == "install" and overwrite):
        return Finding(Risk.PROTECTED_WRITE, f"the git hooks (pre-commit {sub})")
    return None


# The commands, and the modules `python -m` runs them as, whose own subcommands are read.
_OWN_COMMANDS: dict[str, Callable[[list[Word]], Finding | None]] = {
    "failgate": _failgate,
    "pre-commit": _pre_commit,
}
_MODULES = {"failgate_hooks": "failgate", "pre_commit": "pre-commit"}
