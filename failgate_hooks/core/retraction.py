"""What to do about an event file that does not validate: retract it. Pure.

Append-only forbids editing or deleting a committed event file, so the way out of
one that does not validate (an old event with a short ref name, say, or a file
misnamed `oops.toml`) is a new event of the same entity that retracts it, by its
file name's stem. Once that event counts, the file no longer makes the entity
invalid (`core/resolve.py`). A misnamed file whose stem is not portable
(`2026-01-01 note.toml`) has no name a retraction can give.
"""

from __future__ import annotations

from failgate_hooks.core.resolve import Resolution, retractable_stem


def retractable_stems(resolution: Resolution) -> tuple[str, ...]:
    """The stems of the entity's files that fail validation and that a retraction clears."""
    found = (retractable_stem(p, resolution.entity_key) for p in resolution.problems)
    return tuple(sorted({stem for stem in found if stem is not None}))


def retracted_paths(resolution: Resolution) -> frozenset[str]:
    """The paths of the entity's files that fail validation and that a counting (valid,
    not pending) retraction clears: their problems no longer count anywhere."""
    return frozenset(p.path for p in resolution.retracted_problems if p.path is not None)


def retracting_events(resolution: Resolution) -> dict[str, tuple[str, ...]]:
    """Each id that an event of the entity retracts, with those events' ids, sorted."""
    found: dict[str, list[str]] = {}
    for event in resolution.events.values():
        for target in event.retracts:
            found.setdefault(target, []).append(event.id)
    return {target: tuple(sorted(ids)) for target, ids in found.items()}


def retract_command(resolution: Resolution) -> str | None:
    """The command that retracts every such file of the entity, or None if it has none.

    It keeps the status the valid events give; with no valid event to set the title
    and triggers, the retraction is the entity's first event and must set them."""
    stems = retractable_stems(resolution)
    if not stems:
        return None
    state = resolution.state
    status = state.status.value if state.status is not None else "observed"
    words = ["failgate record", resolution.entity_key, "--status", status]
    words += [f"--retracts {stem}" for stem in stems]
    if state.title is None:
        words.append("--title TITLE")
    if state.triggers is None:
        words.append("--trigger TRIGGER")
    return " ".join(words)


def retract_advice(command: str) -> str:
    """One sentence that says how to clear the entity's files that do not validate."""
    return (
        "an event file is never edited or deleted once committed; retract each that "
        f"does not validate with `{command}`, and commit it"
    )
