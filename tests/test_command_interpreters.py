"""An interpreter's inline code is read however its option is written.

`python3 -c CODE` is also `python3 -Bc CODE`, `python3 -cCODE`; `node -e CODE` is
also `node -pe CODE` and `node --eval=CODE`; perl, ruby and php cluster their
switches the same way. A cluster the scan cannot read to its code letter is
unreadable.
"""

from __future__ import annotations

import pytest

from failgate_hooks.core.agent.command_rules import Risk
from tests.test_command_scan import risks

PY_PUSH = "import os; os.system('git push --no-verify')"
JS_PUSH = "require('child_process').execSync('git push --no-verify')"
RB_PUSH = "system('git push --no-verify')"

# The code is in the text, behind an option written as a cluster, attached, or after `=`.
CLUSTERED_OR_ATTACHED = [
    f'node -pe "{JS_PUSH}"',
    f'node -p "{JS_PUSH}"',
    f'node --eval="{JS_PUSH}"',
    f'node --print="{JS_PUSH}"',
    f'node -e"{JS_PUSH}"',
    f'python3 -Bc "{PY_PUSH}"',
    f'python3 -Ic "{PY_PUSH}"',
    f'python3 -IsEc "{PY_PUSH}"',
    f'python3 -c"{PY_PUSH}"',
    """python3 -c'import os; os.system("git push --no-verify")'""",
    f'python3 -Bc"{PY_PUSH}"',
    f'python3 -OO -c "{PY_PUSH}"',
    f'pypy3 -Sc "{PY_PUSH}"',
    f'ruby -we "{RB_PUSH}"',
    f'ruby -e"{RB_PUSH}"',
    f'ruby -W0e "{RB_PUSH}"',  # -W takes an optional level, then the cluster goes on
    f'perl -lne "{RB_PUSH}"',
    f'perl -lane "{RB_PUSH}"',
    f'perl -e"{RB_PUSH}"',
    f'perl -E "{RB_PUSH}"',
    f'php -r"{RB_PUSH};"',
    f'php -nr "{RB_PUSH};"',
    f'php -R "{RB_PUSH};"',  # code run for each line of input
    f'deno eval "{JS_PUSH}"',
    f'deno eval --quiet "{JS_PUSH}"',  # deno eval's code is its operand, after its options
    f'bun -e "{JS_PUSH}"',
    f'bun --eval="{JS_PUSH}"',
    f'bun --print "{JS_PUSH}"',
    "expect -c'exec git push --no-verify'",
]


@pytest.mark.parametrize("command", CLUSTERED_OR_ATTACHED)
def test_inline_code_behind_a_clustered_or_attached_option_is_judged(command: str) -> None:
    assert Risk.PUSH_BYPASS in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -Bc \"import shutil; shutil.rmtree('.git/hooks')\"",
        "node --eval=\"require('fs').rmSync('.git/hooks', {recursive: true})\"",
        "perl -le 'unlink \".git/hooks/pre-push\"'",
    ],
)
def test_inline_code_behind_a_cluster_that_names_the_hooks_is_refused(command: str) -> None:
    assert Risk.PROTECTED_WRITE in risks(command), command


# A cluster holding the code letter, but behind a letter the scan does not know (which may
# take a value, or not), or one the shell computes: what runs is unknown.
UNREADABLE_CLUSTERS = [
    f'python3 -Zc "{PY_PUSH}"',
    f'python3 -B$X "{PY_PUSH}"',  # `$X` may be `c`
    f'ruby -W:no-deprecated -Ke "{RB_PUSH}"',
    f'node -ze "{JS_PUSH}"',
    f'perl -Ye "{RB_PUSH}"',
]


@pytest.mark.parametrize("command", UNREADABLE_CLUSTERS)
def test_a_cluster_the_scan_cannot_read_to_its_code_is_unreadable(command: str) -> None:
    assert risks(command) & {Risk.PUSH_UNREADABLE, Risk.PUSH_BYPASS}, command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -B script.py && git push",
        "python3 -m pytest && git push",
        "python3 -Bm pytest -q && git push",
        "node -v && git push",
        "node script.js && git push",
        "python3 -c 'print(1)' && git push",
        "python3 -c'print(1)' && git push",
        # a letter that takes a value takes the rest of its word: no code there
        "python3 -Werror::DeprecationWarning -m pytest && git push",
        "python3 -Xpycache_prefix=/tmp/pyc script.py && git push",
        "perl -Mfeature=say -e 'say 1' && git push",
        "ruby -rset -e 'p Set.new' && git push",
        "perl -i.bak -pe 's/a/b/' src/x.c && git push",
        # code on the command line: its input is data, whichever way the option is written
        "python3 -c'import sys; print(sys.stdin.read())' < notes.txt && git push",
        "cat notes.txt | node --eval='process.stdin.pipe(process.stdout)' && git push",
        "cat notes.txt | python3 -Bc 'import sys; print(sys.stdin.read())' && git push",
    ],
)
def test_ordinary_interpreter_use_proceeds(command: str) -> None:
    assert risks(command) == set(), command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -Bm failgate_hooks expire deploy:gas --note x",
        "python3 -mfailgate_hooks expire deploy:gas --note x",
    ],
)
def test_a_module_behind_a_cluster_is_the_module_run(command: str) -> None:
    assert Risk.RELAXING in risks(command), command


@pytest.mark.parametrize(
    "command",
    [
        "perl -d script.pl < in.txt && git push",  # -d's value is only ever attached
        "ruby -x script.rb < in.txt && git push",
        "perl -i script.pl < in.txt && git push",
    ],
)
def test_a_letter_whose_value_is_only_attached_leaves_the_next_word_the_script(
    command: str,
) -> None:
    assert risks(command) == set(), command
