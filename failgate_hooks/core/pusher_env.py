"""The variables a pusher sets in a server's environment, whatever the server's own say.

git's own (push options arrive as GIT_PUSH_OPTION_*), those sshd accepts from a
client by default (AcceptEnv LANG LC_*), or that a client names in its command,
and over HTTP the CGI variables git-http-backend's web server makes from the
request (every header as HTTP_*, its query and path, identd's answer). A push to
a path or file:// URL runs the server's hook in the pusher's whole environment.
"""

from __future__ import annotations

PUSHER_CONTROLLED = (
    "LANG", "LANGUAGE", "TZ", "TERM", "SSH_ORIGINAL_COMMAND",
    "QUERY_STRING", "PATH_INFO", "PATH_TRANSLATED", "CONTENT_TYPE", "REMOTE_IDENT",
    "REQUEST_URI", "DOCUMENT_URI", "SCRIPT_URI", "SCRIPT_URL",
)  # fmt: skip
# REDIRECT_*: Apache's copies of the request's variables after an internal redirect.
PUSHER_CONTROLLED_PREFIXES = ("GIT_", "LC_", "HTTP_", "REDIRECT_")


def is_pusher_controlled(name: str) -> bool:
    """Whether a pusher can set the variable `name` in a server hook's environment."""
    return name in PUSHER_CONTROLLED or name.startswith(PUSHER_CONTROLLED_PREFIXES)


def env_pass_withheld(*, pusher_env: bool, reviewed: bool) -> bool:
    """Whether a verifier gets none of its `env_pass` variables: on a server (its
    environment is a pusher's) when no protected revision holds the event that sets
    the verification. Such a verification came with the push, and whoever pushed it
    would read the server's own variables (a deploy token) in its output."""
    return pusher_env and not reviewed
