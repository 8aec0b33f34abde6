"""What a shell runs as its program, and where it reads it from. Pure.

A shell runs one of three things: code on its command line (`sh -c CODE`), a
script file (`sh x.sh`: its commands are not in this text), or what arrives on
a descriptor (`sh`, `sh -s`, `sh -`, `sh /dev/stdin`, `sh /dev/fd/3`, and `at`).
What arrives on a descriptor is read when the text holds it (a here-document or
a here-string), and is unreadable when a pipe, a file, another descriptor or a
process substitution feeds it.
"""

from __future__ import annotations

from collections.abc import Callable

from failgate_hooks.core.command_rules import _DESCRIPTOR_SCRIPT
from failgate_hooks.core.command_state import LineReader, ScanState
from failgate_hooks.core.command_words import _shown
from failgate_hooks.core.shell_lexer import DYN, READ_REDIRECTS, Command, Word

# How a program's text that arrives on a descriptor is judged: the word, and what it is.
ReadText = Callable[[Word, str], None]


def read_shell(
    read: LineReader, args: list[Word], cmd: Command, state: ScanState, depth: int
) -> None:
    """`bash -c CODE`, a script file, or a shell that runs what arrives on a descriptor."""
    index = 0
    takes_code = reads_input = False
    while index < len(args) and not args[index].dynamic:
        text = args[index].text
        index += 1
        if text in ("-", "--"):
            break  # the end of the options: what follows is the script and its arguments
        if not text.startswith(("-", "+")):
            index -= 1
            break
        if text.startswith("--"):
            index += text in ("--rcfile", "--init-file")
            continue
        takes_code = takes_code or (text[0] == "-" and "c" in text)
        reads_input = reads_input or (text[0] == "-" and "s" in text)  # the operands are $1…
        index += sum(text.count(flag) for flag in "oO")  # `-o pipefail`, `-eo pipefail`
    if takes_code:
        read.code_string(args[index : index + 1], state, depth, what="a shell's -c")
        return
    descriptor: str | None = "0"
    if not reads_input and index < len(args):
        descriptor = script_descriptor(args[index], "a shell", state)
    if descriptor is not None:
        program_input(cmd, descriptor, state, "a shell", shell_text(read, state, depth))


def shell_text(read: LineReader, state: ScanState, depth: int) -> ReadText:
    """Text a shell reads as its commands: command lines, read one level deeper."""
    return lambda word, what: read.code_string([word], state, depth, what)


def script_descriptor(script: Word, who: str, state: ScanState) -> str | None:
    """The descriptor a script operand names (`/dev/stdin`, `/dev/fd/3`); None for a file."""
    if script.text == DYN:
        state.unreadable.append(f"{who} runs a script the shell computes (a <(…), a variable)")
        return None
    if (named := _DESCRIPTOR_SCRIPT.fullmatch(script.text)) is None:
        return None  # a script file: its commands are not in this text
    descriptor = named.group(1) or "0"
    if not descriptor.isdigit():
        state.unreadable.append(f"{who} reads its commands from a descriptor it computes")
        return None
    return descriptor


def program_input(
    cmd: Command, descriptor: str, state: ScanState, who: str, read_text: ReadText
) -> None:
    """What a program reading descriptor `descriptor` runs: here-documents are read, the rest
    is not.

    Every here-document and here-string is read, whichever descriptor it feeds: reading
    one the program ignores costs nothing, and which one it reads last is the shell's to say.
    """
    for doc in cmd.heredocs:
        read_text(Word(doc.body), f"{who}'s here-document")
    for word in cmd.herestrings:
        read_text(word, f"{who}'s <<<")
    opened = [r for r in cmd.redirects if r.op in READ_REDIRECTS and (r.fd or "0") == descriptor]
    if cmd.piped and descriptor == "0":
        state.unreadable.append(f"{who} reads its commands from a pipe")
    elif opened:
        source = _shown(opened[-1].target) if opened[-1].target else "another descriptor"
        state.unreadable.append(f"{who} reads its commands from {source}")
    elif descriptor != "0" and not cmd.heredocs and not cmd.herestrings:
        state.unreadable.append(f"{who} reads its commands from descriptor {descriptor}")
