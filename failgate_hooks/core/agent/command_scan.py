"""What a shell command would do to the gate, read before it runs. Pure: no I/O.

A coding agent's hook hands failgate the command string of a shell tool call.
This reads it, once, and says what routes around the gate:

- a `git push` that carries a hook bypass: `--no-verify` (or a prefix git accepts
  for it; `-n` is `--dry-run`, never a bypass), `-c core.hooksPath=…`, an
  included config, or a variable that changes which hooks or which config git
  reads (`GIT_CONFIG_*`, `GIT_DIR`, `HOME`, pre-commit's `SKIP`, failgate's own);
- a push it cannot read: computed by the shell (`$g push`, `git $(…)`, an
  argument only known when it runs), run from `eval`, `bash -c`, a shell or an
  interpreter fed from a pipe, a file or a descriptor, `xargs`, `ssh HOST CMD`,
  a terminal multiplexer, or text it cannot parse at all;
- a command git runs, on its way to a push or at a later command
  (`core.sshCommand`, `--receive-pack`, `core.fsmonitor`, `core.pager`, a filter):
  read as the command line it is, however the key is set (`git config`, `-c`,
  `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, `GIT_CONFIG_PARAMETERS`);
- a line with any part it cannot read: handed back whole (`CommandScan.unread`),
  for `protected.py` to judge by the protected names it holds, as inline code;
- `git config` that moves or includes the hooks, an alias that pushes with a
  bypass, and failgate's own relaxing commands (`expire`, `confirm`, `trust
  --yes`, `uninstall`, `record --supersedes/--retracts/--status expired`);
- the files a command writes and the inline code it hands an interpreter, which
  `protected.py` judges against the hooks, the ledger and the agents' config.

A plain push proceeds: the git hook decides.

This is a first fence, not the gate: a script file, an alias or a variable set
by an earlier tool call, or a rewrite the shell alone resolves, stays invisible.
"""

from __future__ import annotations

from collections.abc import Sequence

from failgate_hooks.core.agent.command_git import (
    command_value,
    config_variable,
    ext_allowed,
    git_pushes,
    read_git,
)
from failgate_hooks.core.agent.command_git_writes import voided
from failgate_hooks.core.agent.command_options import WRAPPER_OPTIONS, OptionWord, option_word
from failgate_hooks.core.agent.command_programs import (
    program_input,
    read_interpreter,
    read_shell,
    shell_text,
)
from failgate_hooks.core.agent.command_restores import settle, structure
from failgate_hooks.core.agent.command_rules import (
    _ALLOW_VARIABLE,
    _APPENDERS,
    _BYPASS_VARIABLES,
    _COMMAND_VARIABLES,
    _HOOKLESS_PROGRAMS,
    _INTERPRETER,
    _JOINS_COMMAND,
    _KEYWORDS,
    _QUEUES,
    _REMOTE_SHELLS,
    _SHELLS,
    _SSH_VALUES,
    _TEMPLATE_VARIABLE,
    _UNFOLLOWED,
    _WRAPPER_OPERAND,
    _WRAPPER_VALUES,
    _WRAPPERS,
    MAX_RECURSION,
    CommandScan,
    Finding,
    Risk,
    Unread,
    basename,
    holds_bypass,
    needs_reading,
    squashed,
)
from failgate_hooks.core.agent.command_state import Push, ScanState
from failgate_hooks.core.agent.command_words import (
    _OWN_COMMANDS,
    _assigned,
    _env_split,
    _moved,
    _shown,
)
from failgate_hooks.core.agent.command_writes import WRITERS, WriteTarget, operands, written_by
from failgate_hooks.core.agent.protected import Protected, named_in
from failgate_hooks.core.agent.shell_lexer import (
    DYN,
    READ_REDIRECTS,
    WRITE_REDIRECTS,
    Command,
    Unreadable,
    Word,
    commands,
)


def scan_command(command: str, cwd: str | None = None) -> CommandScan:
    """What `command`, run in `cwd`, would do around the gate."""
    flat = squashed(command)
    # a protected name is a needle too: the line may hold a part the scan cannot read
    if not needs_reading(flat) and named_in(flat, Protected()) is None:
        return CommandScan()
    state = ScanState(cwd)
    try:
        _scan_text(command, state, depth=0)
    except Unreadable as error:
        state.unreadable.append(error.reason)
    if state.irregular:  # a restore is checked before it runs only in a line run in order
        state.writes = voided(state.writes, state.irregular, first=True)
    if state.unreadable:  # and read to the end
        state.writes = voided(state.writes, "part of the line cannot be read")
    return _verdict(command, state, bypass_seen=holds_bypass(flat))


def _verdict(command: str, state: ScanState, *, bypass_seen: bool) -> CommandScan:
    pushes = "push" in squashed(command)
    findings = list(state.findings)
    for push in state.pushes:
        bypass = push.bypass or next(iter(state.bypass_variables), None)
        if bypass is not None:
            findings.append(Finding(Risk.PUSH_BYPASS, bypass))
        elif push.kind == "push" and push.computed_args:
            findings.append(
                Finding(Risk.PUSH_UNREADABLE, "its arguments are computed when the shell runs it")
            )
        elif push.kind == "computed" and pushes:
            findings.append(
                Finding(Risk.PUSH_UNREADABLE, "which git command runs is computed by the shell")
            )
    if state.unreadable and (pushes or bypass_seen or state.bypass_variables):
        findings.append(Finding(Risk.PUSH_UNREADABLE, state.unreadable[0]))
    for code in state.code:
        flat = squashed(code)
        if "push" in flat and holds_bypass(flat):
            findings.append(Finding(Risk.PUSH_BYPASS, "inline code that pushes with a bypass"))
        elif "push" in flat and "git" in flat:
            # what code runs is only known when it runs: `'--no-' + 'verify'` is a bypass
            findings.append(Finding(Risk.PUSH_UNREADABLE, "inline code that runs git and pushes"))
    return CommandScan(
        findings=tuple(dict.fromkeys(findings)),
        writes=tuple(state.writes),
        code=tuple(state.code),
        # what the unread part runs is unknown: the whole line is judged by the names it holds
        unread=Unread(command, state.unreadable[0]) if state.unreadable else None,
    )


def _scan_text(text: str, state: ScanState, depth: int) -> None:
    """Each command of `text`, in order (a `cd` moves the ones after it)."""
    if depth > MAX_RECURSION:
        raise Unreadable("it nests shells too deeply to read")
    found = commands(text)
    if depth == 0:
        state.irregular = state.irregular or structure(found)
    for cmd in found:
        _command(cmd, state, depth)


def _command(cmd: Command, state: ScanState, depth: int) -> None:
    start = len(state.writes)
    for redirect in cmd.redirects:
        if redirect.op in WRITE_REDIRECTS and redirect.target is not None:
            state.writes.append(WriteTarget(redirect.target.text, state.cwd))
    words = list(cmd.words)
    plain = True  # no variable set for it
    while words and not words[0].dynamic and words[0].text in _KEYWORDS:
        words.pop(0)
        if depth == 0:
            state.irregular = state.irregular or "the line runs a loop, a condition or a group"
    while words and (name := _assigned(words[0])) is not None:
        _assignment(name, state, words.pop(0), depth)
        plain = False
    if words:
        _argv(words, cmd, state, depth)
    settle(state, start, cmd, words, depth, plain=plain)


def _assignment(name: str, state: ScanState, word: Word, depth: int) -> None:
    if name == "GIT_WORK_TREE":  # git writes a commit's files there: judged as written whole
        state.writes.append(WriteTarget(word.text.partition("=")[2], state.cwd, removes=True))
    if name == _TEMPLATE_VARIABLE:
        state.template = name
    if name == _ALLOW_VARIABLE:
        value = word.text.partition("=")[2]
        ext_allowed(name, Word(value, word.dynamic, word.prefix.partition("=")[2]), state)
    if _BYPASS_VARIABLES.fullmatch(name):
        state.bypass_variables.append(name)
        config_variable(_READER, name, word, state, depth)
    elif name in _COMMAND_VARIABLES:
        command_value(_READER, name, word.text.partition("=")[2], word.dynamic, state, depth)


def _argv(argv: list[Word], cmd: Command, state: ScanState, depth: int) -> None:
    head = argv[0]
    program = basename(head.text)  # `"$(git --exec-path)/git-push"` is git-push all the same
    if head.dynamic and (DYN in program or not program.startswith("git-")):
        if any(not w.dynamic and w.text == "push" for w in argv[1:]):
            state.pushes.append(Push("computed", None, computed_args=True))
        state.unreadable.append(f"the command {_shown(head)} is computed by the shell")
        return
    name = program
    args = argv[1:]
    if name in _WRAPPERS:
        inner = _unwrap(name, args, state, depth)
        if inner and name in _JOINS_COMMAND:
            _code_string(inner, state, depth, what=name)
        elif inner:
            _argv(inner, cmd, state, depth)
    elif name in _APPENDERS:
        _appender(name, args, state, depth)
    elif name == "git":
        read_git(_READER, args, state, depth, state.cwd)
    elif name.startswith("git-") and len(name) > 4:
        # a git command by its own program name, as git's exec path holds it
        read_git(_READER, [Word(name[4:]), *args], state, depth, state.cwd)
    elif name in _HOOKLESS_PROGRAMS:
        _hookless_push(name, args, state)
    elif name in _SHELLS:
        read_shell(_READER, args, cmd, state, depth)
    elif name == "eval":
        _code_string(args, state, depth, what="eval")
    elif name == "trap":
        _code_string([w for w in operands(args) if w.text != "-"][:1], state, depth, what="trap")
    elif name in _UNFOLLOWED:
        state.unreadable.append(f"{name} runs its command in a shell this hook cannot follow")
    elif name in _REMOTE_SHELLS:
        _remote(name, args, cmd, state)
    elif name in _QUEUES:
        if not any(w.text.startswith("-f") for w in args):  # `-f FILE`: a script file, unseen
            program_input(cmd, "0", state, name, shell_text(_READER, state, depth))
    elif name == "alias":
        for word in args:
            _, sep, value = word.text.partition("=")
            if sep:
                _nested(value, state, depth)
    elif name in ("export", "declare", "typeset", "local", "readonly"):
        for word in args:
            assigned = _assigned(word)
            variable = assigned or (word.text if not word.text.startswith("-") else "")
            if assigned:
                _assignment(assigned, state, word, depth)
            elif variable and _BYPASS_VARIABLES.fullmatch(variable):
                state.bypass_variables.append(variable)
    elif name in ("cd", "pushd", "popd"):
        state.cwd = _moved(state.cwd, [w for w in args if not w.text.startswith("-")])
    elif name in _OWN_COMMANDS:
        state.findings.extend(f for f in [_OWN_COMMANDS[name](args)] if f is not None)
    elif _INTERPRETER.fullmatch(name):
        read_interpreter(name, args, cmd, state)
    elif name == "find":
        _find(args, cmd, state, depth)
    else:
        state.writes.extend(written_by(name, args, state.cwd))
        # an unknown wrapper in front of git (`nice -n5 git push`, `echo git push`)
        for index, word in enumerate(args):
            if not word.dynamic and basename(word.text) == "git":
                read_git(_READER, args[index + 1 :], state, depth, state.cwd, pushes_only=True)
                break


def _hookless_push(name: str, args: list[Word], state: ScanState) -> None:
    """`jj git push`, `sl push`: a push to a git remote that runs no git hook."""
    pushes = _HOOKLESS_PROGRAMS[name].split()
    texts = [w.text for w in args if not w.dynamic]
    if any(texts[i : i + len(pushes)] == pushes for i in range(len(texts))):
        what = f"{name} {_HOOKLESS_PROGRAMS[name]}, which runs no git hook"
        state.pushes.append(Push("push", what, computed_args=False))


def _unwrap(name: str, args: list[Word], state: ScanState, depth: int) -> list[Word]:
    """The command a wrapper runs, and the variables it sets on the way."""
    values = _WRAPPER_VALUES.get(name, set())
    operand = name in _WRAPPER_OPERAND
    index = 0
    while index < len(args):
        word = args[index]
        text = word.text
        if name in ("env", "sudo", "doas") and (variable := _assigned(word)) is not None:
            _assignment(variable, state, word, depth)
        elif name == "env" and (split := _env_split(args, index)) is not None:
            _code_string(split, state, depth, what="env -S")
            return []
        elif name in WRAPPER_OPTIONS and (given := _wrapper_code(name, args, index)):
            if given.unreadable:
                state.unreadable.append(f"{name} {_shown(word)} runs a command unseen here")
            else:
                _code_string(given.code, state, depth, what=f"{name} -c")
            return []
        elif text == "--":
            return args[index + 1 :]
        elif text.startswith("-") and not word.dynamic:
            index += 1 if text in values else 0
        elif operand:
            operand = False
        else:
            return args[index:]
        index += 1
    return []


def _wrapper_code(name: str, args: list[Word], index: int) -> OptionWord | None:
    """What `args[index]` gives the wrapper when it holds the command line it runs, or
    one the cluster hides; None for any other word."""
    given = option_word(WRAPPER_OPTIONS[name], args, index)
    return given if given.code or given.unreadable else None


def _remote(name: str, args: list[Word], cmd: Command, state: ScanState) -> None:
    """`ssh HOST CMD`, or commands fed to the remote shell: run where this hook cannot see."""
    index = 0
    while index < len(args) and args[index].text.startswith("-") and not args[index].dynamic:
        text = args[index].text
        index += 1
        if text == "--":
            break
        value = next((i for i, flag in enumerate(text[1:], 1) if flag in _SSH_VALUES), None)
        index += value == len(text) - 1  # `-p 22`; `-p22` holds its value
    operands = args[index:]
    fed = cmd.heredocs or cmd.herestrings or cmd.piped
    fed = fed or any(r.op in READ_REDIRECTS and r.fd in ("", "0") for r in cmd.redirects)
    if len(operands) > 1 or (operands and fed):
        state.unreadable.append(f"{name} runs a command on another machine, unseen here")


def _appender(name: str, args: list[Word], state: ScanState, depth: int) -> None:
    """`xargs CMD`: the arguments it adds to CMD (or puts for `-I{}`, the program too) are
    read from its input, unseen here."""
    if any(not w.text.startswith("-") for w in args):
        state.unreadable.append(f"{name} runs a command with arguments it reads from its input")
    for index, word in enumerate(args):
        if not word.dynamic and basename(word.text) == "git":
            state.pushes.extend(
                Push(p.kind, p.bypass, computed_args=True)
                for p in git_pushes(_READER, args[index + 1 :], state, depth)
            )
            return


def _code_string(words: Sequence[Word], state: ScanState, depth: int, what: str) -> None:
    """Words the shell joins and runs again as a command line."""
    if not words:
        return
    if any(w.dynamic for w in words):
        state.unreadable.append(f"{what} runs a command computed by the shell")
        return
    _nested(" ".join(w.text for w in words), state, depth)


def _nested(text: str, state: ScanState, depth: int) -> None:
    _scan_text(text, state, depth + 1)


def _find(args: list[Word], cmd: Command, state: ScanState, depth: int) -> None:
    """`find ROOT -delete` removes what it finds; `-exec CMD {} ;` runs CMD on each."""
    roots = []
    for word in args:
        if word.text.startswith(("-", "(", "!")):
            break
        roots.append(word)
    texts = [w.text for w in args]
    writes = "-delete" in texts
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in texts:
            start = texts.index(flag) + 1
            end = next((i for i in range(start, len(texts)) if texts[i] in (";", "+")), len(texts))
            inner = [Word(DYN, dynamic=True) if w.text == "{}" else w for w in args[start:end]]
            if inner:
                writes = writes or basename(inner[0].text) in WRITERS
                _argv(inner, Command(), state, depth)
    if writes:
        # what it changes is inside its starting points, whatever the expression selects
        state.writes.extend(WriteTarget(w.text, state.cwd) for w in roots)


class _Reader:
    """The scan as `LineReader`: how git's part of it hands back a command line it found."""

    def argv(self, words: list[Word], state: ScanState, depth: int) -> None:
        _argv(words, Command(), state, depth)

    def line(self, text: str, state: ScanState, depth: int) -> None:
        _nested(text, state, depth)

    def code_string(self, words: Sequence[Word], state: ScanState, depth: int, what: str) -> None:
        _code_string(words, state, depth, what)


_READER = _Reader()
