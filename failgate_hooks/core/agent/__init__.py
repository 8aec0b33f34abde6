"""The agent command scanner: what a coding agent's tool call would do to the gate. Pure.

The agent hook screens the shell commands an AI agent is about to run for ways
around the git hook (a push with a bypass, a write to the hooks or the ledger,
a command it cannot read), and answers in each agent's own hook format. These
are its rules: the shell lexer, the command scan and its tables, the protected
paths, the restore check, each agent's payload and configuration, and what the
agent is told of held gates. They may use the gate's core; the gate's core never
imports them (tests/test_layers.py).
"""
