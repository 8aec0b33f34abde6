"""A git command line as the command scan reads it: the pushes it makes, and around them. Pure.

Its global options (`-c`, `--config-env`, `--git-dir`, `-C`), the subcommand, a
push's bypass and the commands it has git run before the pre-push hook
(`--receive-pack`, an `ext::` URL, `core.sshCommand` and the like), those
another transport runs (`fetch --upload-pack`, `clone -u`, an `ext::` URL),
`git config` that moves the hooks or defines an alias (a key set, or a section
renamed onto one), a config key whose value git runs as a command, then or at a
later command (`core.fsmonitor`, `core.pager`: set by `-c`, `--config-env`,
`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` or `git config`), and the commands other
subcommands run (`submodule foreach`, `rebase --exec`, `bisect run`). A command
line found on the way is handed back to the scan through `LineReader`.
"""

from __future__ import annotations

import re

from failgate_hooks.core.agent.command_git_index import INDEX_WRITERS, index_writes
from failgate_hooks.core.agent.command_git_writes import GIT_WRITERS, git_writes, voided
from failgate_hooks.core.agent.command_rules import (
    _ALLOWING_SECTIONS,
    _CLONE_CONFIG,
    _COMMAND_KEYS,
    _COMMAND_SECTIONS,
    _CONFIG_EDITS,
    _CONFIG_READS,
    _CONFIG_VALUES,
    _CONFIG_VARIABLE,
    _CONFIG_WRITES,
    _EXT_ALLOW_KEYS,
    _GIT_NOT_PUSH,
    _GIT_VALUE_OPTIONS,
    _HOOK_KEYS,
    _HOOK_SECTIONS,
    _HOOKLESS_PUSHES,
    _RUN_OPTIONS,
    _SECTION_ACTIONS,
    _TEMPLATE_KEY,
    _TEMPLATE_OPTION,
    _URL_COMMANDS,
    Finding,
    Risk,
)
from failgate_hooks.core.agent.command_state import LineReader, Push, ScanState
from failgate_hooks.core.agent.command_words import (
    _bypass_flag,
    _moved,
    _shown,
    ext_argv,
    ext_urls,
    run_values,
)
from failgate_hooks.core.agent.command_writes import WriteTarget
from failgate_hooks.core.agent.shell_lexer import DYN, Unreadable, Word, commands

# Subcommands that write files of a commit or the index into the work tree.
_WRITES_THE_TREE = frozenset({"checkout", "switch", "reset", "restore", "merge", "pull",
                              "cherry-pick", "revert", "rebase", "am", "apply", "stash",
                              "read-tree", "checkout-index", "clone", "worktree"})  # fmt: skip


def command_value(
    read: LineReader, what: str, value: str, dynamic: bool, state: ScanState, depth: int
) -> None:
    """A command git runs through the shell: on its way to a push, before the pre-push hook,
    or at a later git command (an editor, a pager, a filter, the fsmonitor hook)."""
    if dynamic and value.lstrip().startswith(DYN):
        state.unreadable.append(f"{what} runs a command computed by the shell")
        state.pushes.append(Push("computed", None, computed_args=True))
    else:
        read.line(value, state, depth)  # `ssh -i $KEY`: what the shell computes stays a word


def git_pushes(read: LineReader, args: list[Word], state: ScanState, depth: int) -> list[Push]:
    """The pushes of one git invocation, apart from the line's others."""
    probe = ScanState(state.cwd)
    read_git(read, args, probe, depth, state.cwd, pushes_only=True)
    state.findings.extend(probe.findings)
    state.unreadable.extend(probe.unreadable)
    return probe.pushes


def read_git(
    read: LineReader,
    args: list[Word],
    state: ScanState,
    depth: int,
    cwd: str | None,
    *,
    pushes_only: bool = False,
) -> None:
    """One git invocation: its global options, then what its subcommand does."""
    bypass: str | None = None
    elsewhere = False  # `--work-tree`: git writes its files where that names
    index = 0
    while index < len(args):
        word = args[index]
        text = word.text
        if word.dynamic:
            break
        option, eq, inline = text.partition("=")
        if option in ("-c", "--config-env"):
            value_word = args[index + 1] if not eq and index + 1 < len(args) else None
            value = inline if eq else (value_word.text if value_word else "")
            if value_word is not None and value_word.dynamic:
                state.unreadable.append(f"git {option} takes a value computed by the shell")
            from_env = option == "--config-env"  # `KEY=NAME`: the value is $NAME's, unseen
            bypass = _git_config_pair(read, value, state, depth, from_env=from_env) or bypass
            key, _, place = value.partition("=")
            if key.lower() == "core.worktree":  # as `--work-tree`
                cwd, elsewhere = _moved(cwd, [Word(place)]), True
            index += 1 if eq else 2
            continue
        if option == "--git-dir" or (option == "--exec-path" and eq):
            bypass = bypass or option  # another repository, or other remote helpers
        if option == "--work-tree":
            tree = [Word(inline, word.dynamic)] if eq else list(args[index + 1 : index + 2])
            cwd = _moved(cwd, tree)
            elsewhere = True
        if option == "-C" and index + 1 < len(args):
            cwd = _moved(cwd, [args[index + 1]])
        if not text.startswith("-"):
            break
        index += 2 if (text in _GIT_VALUE_OPTIONS and not eq) else 1
    if index >= len(args):
        return
    sub, rest = args[index], args[index + 1 :]
    if sub.dynamic:
        state.pushes.append(Push("computed", bypass or _bypass_flag(rest), computed_args=True))
        return
    name = sub.text
    _commands_run(read, name, rest, state, depth)  # a push's before its hook
    if name in _HOOKLESS_PUSHES:
        state.pushes.append(Push("push", f"git {name}, which runs no hook", computed_args=False))
    elif name == "push":
        computed = any(w.dynamic for w in rest)
        state.pushes.append(Push("push", bypass or _bypass_flag(rest), computed_args=computed))
    elif name not in _GIT_NOT_PUSH:
        state.pushes.append(Push("unknown", bypass or _bypass_flag(rest), computed_args=False))
    elif pushes_only:
        return
    elif name == "init":
        _git_init(rest, state)
    elif name == "config":
        _git_config(read, rest, state, depth)
    elif name in GIT_WRITERS or name in INDEX_WRITERS:
        writes = (
            git_writes(name, rest, cwd) if name in GIT_WRITERS else index_writes(name, rest, cwd)
        )
        if index:  # `-C`, `-c`, `--work-tree`, `--git-dir`: another repository, or other rules
            writes = voided(writes, f"git's own options ({_shown(args[0])}) come before it")
        state.writes.extend(writes)
    elif name == "submodule" and rest and rest[0].text == "foreach":
        read.code_string(
            [w for w in rest[1:] if not w.text.startswith("-")], state, depth, "foreach"
        )
    elif name == "rebase":
        _rebase_exec(read, rest, state, depth)
    elif name == "bisect" and rest and rest[0].text == "run" and len(rest) > 1:
        read.argv(rest[1:], state, depth)
    if elsewhere and name in _WRITES_THE_TREE:
        # Every tracked file a commit holds may land there (`--work-tree=.git/hooks`).
        state.writes.append(WriteTarget(".", cwd, removes=True))


def _git_init(args: list[Word], state: ScanState) -> None:
    """`git init` with a template: in an existing repository it copies each file of the
    template that is not there yet, and a `commondir` among them says the hooks, config
    and refs are elsewhere (tried with git 2.39). Where it runs is not known here."""
    template = state.template or ("--template" if run_values(args, _TEMPLATE_OPTION) else None)
    if template is not None:
        what = f"git init with a template ({template}), whose files may move the hooks"
        state.findings.append(Finding(Risk.HOOKS_CONFIG, what))


def _commands_run(
    read: LineReader, name: str, args: list[Word], state: ScanState, depth: int
) -> None:
    """The command lines `git NAME` has git run that its words name: the program its options
    name (`--receive-pack=CMD`, `--upload-pack=CMD`, `clone -u CMD`, `difftool -x CMD`,
    `filter-branch --tree-filter CMD`), each `ext::` URL's command, and the command keys
    `clone -c` sets."""
    if name in _URL_COMMANDS:
        for word in ext_urls(args):
            _ext(read, word, state, depth)
    if name in _RUN_OPTIONS:
        for given in run_values(args, _RUN_OPTIONS[name]):
            what = f"git {name} runs a command"
            command_value(read, what, given.text, given.dynamic, state, depth)
    if name == "clone":  # its `-c` pairs, as git's own: the clone's hooks are not ours
        for pair in run_values(args, _CLONE_CONFIG):
            _git_config_pair(read, pair.text, state, depth, dynamic=pair.dynamic)


def _ext(read: LineReader, word: Word, state: ScanState, depth: int) -> None:
    """An `ext::` URL: git runs its command (words split at spaces, `% ` one space)."""
    if word.dynamic:
        command_value(read, "an ext:: URL", DYN, True, state, depth)
        return
    if words := ext_argv(word.text):
        read.argv(words, state, depth)


def config_variable(read: LineReader, name: str, word: Word, state: ScanState, depth: int) -> None:
    """`GIT_CONFIG_KEY_n=K` and `GIT_CONFIG_VALUE_n=V`, once both are set, and each pair of
    `GIT_CONFIG_PARAMETERS`: git's `-c K=V`."""
    if name == "GIT_CONFIG_PARAMETERS":
        _config_parameters(read, word, state, depth)
        return
    match = _CONFIG_VARIABLE.fullmatch(name)
    if match is None:
        return
    part, number = match.groups()
    state.config_variables[(part, number)] = word
    key = state.config_variables.get(("KEY", number))
    value = state.config_variables.get(("VALUE", number))
    if key is None or value is None:
        return
    key_text, value_text = key.text.partition("=")[2], value.text.partition("=")[2]
    if key.dynamic:  # any key at all, a command key among them
        state.unreadable.append(f"GIT_CONFIG_KEY_{number} names a key computed by the shell")
    else:
        _git_config_pair(read, f"{key_text}={value_text}", state, depth, dynamic=value.dynamic)


def _config_parameters(read: LineReader, word: Word, state: ScanState, depth: int) -> None:
    """`GIT_CONFIG_PARAMETERS="'K'='V' 'K2'='V2'"`: git quotes its pairs as the shell does."""
    if word.dynamic:
        state.unreadable.append("GIT_CONFIG_PARAMETERS holds pairs computed by the shell")
        return
    try:
        found = commands(word.text.partition("=")[2])
    except Unreadable as error:
        state.unreadable.append(f"GIT_CONFIG_PARAMETERS cannot be read: {error.reason}")
        return
    for pair in (w for cmd in found for w in cmd.words):
        _git_config_pair(read, pair.text, state, depth, dynamic=pair.dynamic)


def _git_config_pair(
    read: LineReader,
    pair: str,
    state: ScanState,
    depth: int,
    *,
    dynamic: bool = False,
    from_env: bool = False,
) -> str | None:
    """A `-c key=value`: the bypass it is (moving the hooks), or what git runs of its value."""
    given, _, value = pair.partition("=")
    key = given.lower()
    if _HOOK_KEYS.fullmatch(key):
        return f"-c {key}"
    if key == _TEMPLATE_KEY:
        state.template = f"-c {key}"
    _url_rewrite(read, Word(given, dynamic), state, depth)
    if from_env and key in _EXT_ALLOW_KEYS:
        ext_allowed(f"--config-env {key}", Word(DYN, dynamic=True), state)
    elif from_env and (_COMMAND_KEYS.fullmatch(key) or key.startswith("alias.")):
        command_value(read, f"--config-env {key}={value}", DYN, True, state, depth)
    elif not from_env:
        _config_value(read, key, Word(value, dynamic), f"-c {key}", state, depth)
    return None


def _config_value(
    read: LineReader, key: str, value: Word, what: str, state: ScanState, depth: int
) -> None:
    """What git runs of the value of `key` (lower case), however the key is set: a command,
    an `ext::` URL's command, an alias; or whether it lets git run any ext:: URL."""
    if key in _EXT_ALLOW_KEYS:
        ext_allowed(what, value, state)
    if _COMMAND_KEYS.fullmatch(key):
        command_value(read, what, value.text.removeprefix("!"), value.dynamic, state, depth)
    if value.text.startswith("ext::"):
        _ext(read, value, state, depth)
    if key.startswith("alias."):
        _alias(read, value.text, state, depth)


def ext_allowed(what: str, value: Word, state: ScanState) -> None:
    """`protocol.ext.allow` (or `protocol.allow`) set to `always` or `user`, or
    GIT_ALLOW_PROTOCOL listing `ext`: the command of an ext:: URL git meets later runs,
    and it may be one no line shows (a submodule's, read from `.gitmodules`)."""
    allowed = value.text.lower().split(":") if what == "GIT_ALLOW_PROTOCOL" else [value.text]
    if value.dynamic or any(v.lower() in ("always", "user", "ext") for v in allowed):
        shown = f"{what}={_shown(value)}"
        about = "lets git run the command of any ext:: URL, one unread here among them"
        state.findings.append(Finding(Risk.PUSH_UNREADABLE, f"{shown} {about}"))


def _url_rewrite(read: LineReader, key: Word, state: ScanState, depth: int) -> None:
    """`url.BASE.insteadOf` (`pushInsteadOf`): git fetches (or pushes) from BASE instead."""
    section, _, name = key.text.rpartition(".")
    if name.lower() in ("insteadof", "pushinsteadof"):
        _rewritten_to(read, Word(section, key.dynamic), state, depth)


def _rewritten_to(read: LineReader, section: Word, state: ScanState, depth: int) -> None:
    """A `url.BASE` section: an `ext::` BASE is a command git runs, named in the key itself."""
    if section.text[:4].lower() == "url." and section.text[4:].startswith("ext::"):
        _ext(read, Word(section.text[4:], section.dynamic), state, depth)


def _git_config(read: LineReader, args: list[Word], state: ScanState, depth: int) -> None:
    """`git config` that moves or includes the hooks, or sets a value git runs (an alias, a
    command key, an `ext::` URL). Its action is an option anywhere (`--get`, `--unset`),
    or git 2.46's subcommand as its first word (`get`, `set`): `git config core.hooksPath
    list` sets the key to `list`."""
    operands: list[Word] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word.text in _CONFIG_VALUES:
            skip = True
        elif not word.text.startswith("-"):
            operands.append(word)
    actions = {w.text for w in args if w.text.startswith("-")}
    if operands and operands[0].text in _CONFIG_READS | _CONFIG_WRITES:
        actions.add(operands.pop(0).text)
    if actions & _CONFIG_READS:
        return
    if actions & _CONFIG_EDITS:  # the editor writes the file: any key, core.hooksPath too
        state.findings.append(Finding(Risk.HOOKS_CONFIG, "git config --edit: its editor"))
        return
    action = next((_SECTION_ACTIONS[a] for a in actions if a in _SECTION_ACTIONS), None)
    if action is not None:
        _config_section(read, action, operands, state, depth)
        return
    if len(operands) < 2 and not actions & _CONFIG_WRITES:
        return  # `git config KEY` reads it
    for index, word in enumerate(operands):
        key = word.text.lower()
        hooks = _HOOK_KEYS.fullmatch(key) or (key == _TEMPLATE_KEY and index == 0)
        if hooks or (word.dynamic and index == 0):
            state.findings.append(Finding(Risk.HOOKS_CONFIG, f"git config {_shown(word)}"))
            return
        if index == 0:
            _url_rewrite(read, word, state, depth)
        if index + 1 < len(operands):
            _config_value(read, key, operands[index + 1], f"git config {key}", state, depth)
            if key.startswith("alias.") or _COMMAND_KEYS.fullmatch(key):
                return


def _config_section(
    read: LineReader, action: str, operands: list[Word], state: ScanState, depth: int
) -> None:
    """`git config --rename-section OLD NEW` and `--remove-section OLD`. NEW's keys are
    OLD's, with values set earlier and unread here: refused when NEW could hold a key that
    moves the hooks, or one whose command git runs (an alias too). OLD's keys go: refused,
    as `--unset core.hooksPath` is, when OLD could hold a key that moves the hooks. A name
    the shell computes could be any of them; a `url.ext::…` NEW is read as its command."""
    shown = " ".join(["git config", f"--{action}-section", *map(_shown, operands)])
    new = operands[1:2] if action == "rename" else []
    if new:  # `url.ext::CMD`: its insteadOf keys now rewrite to CMD
        _rewritten_to(read, new[0], state, depth)
    if any(_could_be(w, _HOOK_SECTIONS) for w in operands[:1] + new):
        state.findings.append(Finding(Risk.HOOKS_CONFIG, shown))
    elif new and (_could_be(new[0], _COMMAND_SECTIONS) or new[0].text.lower() == "alias"):
        what = f"{shown}: keys set earlier, unread here, become commands git runs"
        state.findings.append(Finding(Risk.PUSH_UNREADABLE, what))
    elif new and new[0].text.lower() in _ALLOWING_SECTIONS:
        # `init.templateDir`, `protocol.ext.allow`: set earlier, unread here
        what = f"{shown}: keys set earlier, unread here, may give git init a template or allow ext"
        state.findings.append(Finding(Risk.PUSH_UNREADABLE, what))


def _could_be(word: Word, sections: re.Pattern[str]) -> bool:
    return word.dynamic or sections.fullmatch(word.text.lower()) is not None


def _alias(read: LineReader, value: str, state: ScanState, depth: int) -> None:
    """A git alias: `!cmd` runs a shell command, anything else runs as git's arguments."""
    read.line(value[1:] if value.startswith("!") else f"git {value}", state, depth)


def _rebase_exec(read: LineReader, args: list[Word], state: ScanState, depth: int) -> None:
    for index, word in enumerate(args):
        if word.text in ("-x", "--exec") and index + 1 < len(args):
            read.code_string([args[index + 1]], state, depth, what="rebase --exec")
        elif word.text.startswith("--exec="):
            read.line(word.text.removeprefix("--exec="), state, depth)
