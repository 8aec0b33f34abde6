"""The `follows` graph of one entity: its cycles, its order, what each event comes after.
Pure: no I/O; ids only, no event's content.

Each step is one pass over the graph, so that an entity's cost grows with its
events and edges, not with the square or cube of a long `follows` chain's length.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

# The one empty set of ids: most events have no ancestors and most entities drop
# nothing, and one object is kept once by the parse cache and walked once by the
# collector, where thousands of equal ones would each be loaded and walked.
NO_IDS: frozenset[str] = frozenset()


def strongly_connected(preds: Mapping[str, Collection[str]]) -> list[set[str]]:
    """The groups of more than one id that each reach all of the others through `follows`
    (Tarjan's algorithm, without recursion: a chain is as deep as it is long)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(preds):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        walking = [(root, iter(sorted(preds[root])))]
        while walking:
            event_id, successors = walking[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    walking.append((step, iter(sorted(preds[step]))))
                elif step in on_stack:
                    low[event_id] = min(low[event_id], index[step])
                continue
            walking.pop()
            if walking:
                parent = walking[-1][0]
                low[parent] = min(low[parent], low[event_id])
            if low[event_id] == index[event_id]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == event_id:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def topological_order(preds: Mapping[str, Collection[str]]) -> tuple[str, ...]:
    """Kahn's algorithm over an acyclic graph, the smallest ready id first."""
    waiting = {event_id: len(before) for event_id, before in preds.items()}
    followers: dict[str, list[str]] = {event_id: [] for event_id in preds}
    for event_id, before in preds.items():
        for pred in before:
            followers[pred].append(event_id)
    ready = [event_id for event_id, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        event_id = heapq.heappop(ready)
        order.append(event_id)
        for follower in followers[event_id]:
            waiting[follower] -= 1
            if waiting[follower] == 0:
                heapq.heappush(ready, follower)
    assert len(order) == len(preds), "cycles are broken before ordering"
    return tuple(order)


class Ancestry(Mapping[str, frozenset[str]]):
    """For each valid event id, every event id it comes after, transitively, through
    dropped events too: one bit mask over resolution positions per event.

    A set of ids per event would hold the square of a long `follows` chain's length;
    the masks hold an eighth of a byte per pair. A mapping all the same, so that it
    reads and compares as the sets it stands for; looking an id up builds its set,
    so walks over many events test bits instead (`mask`, `comes_after`, `walk`)."""

    __slots__ = ("bits", "order", "position", "preds")

    def __init__(self, order: tuple[str, ...], preds: Mapping[str, Collection[str]]) -> None:
        position = {event_id: i for i, event_id in enumerate(order)}
        # each event's direct predecessors, by position: the order puts them first
        direct = tuple(tuple(sorted(position[p] for p in preds[event_id])) for event_id in order)
        bits: list[int] = []
        for before in direct:
            mask = 0
            for pred in before:
                mask |= bits[pred] | (1 << pred)
            bits.append(mask)
        self.order = order
        self.position = position
        self.preds = direct
        self.bits = tuple(bits)

    def __getitem__(self, event_id: str) -> frozenset[str]:
        mask = self.bits[self.position[event_id]]
        return frozenset(self.order[i] for i in positions(mask)) if mask else NO_IDS

    def __contains__(self, event_id: object) -> bool:
        return event_id in self.position

    def __iter__(self) -> Iterator[str]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)

    def mask(self, event_ids: Iterable[str]) -> int:
        """The positions of these ids as one mask (ids of no event are left out)."""
        found = 0
        for event_id in event_ids:
            position = self.position.get(event_id)
            if position is not None:
                found |= 1 << position
        return found

    def comes_after(self, event_id: str, mask: int) -> bool:
        """Whether `event_id` comes after every event of `mask`."""
        position = self.position.get(event_id)
        return position is not None and self.bits[position] & mask == mask

    def heads(self, remaining: Iterable[str]) -> tuple[str, ...]:
        """The remaining events that no remaining event comes after, through dropped
        ones too, sorted by id."""
        remaining = tuple(remaining)
        covered = 0
        for event_id in remaining:
            covered |= self.bits[self.position[event_id]]
        return tuple(sorted(e for e in remaining if not covered >> self.position[e] & 1))


def positions(mask: int) -> list[int]:
    """The positions a mask holds, in increasing order."""
    return [i for i, bit in enumerate(reversed(f"{mask:b}")) if bit == "1"]


# A fold's deciders: for each key a fold sets, the position of the last event that
# set it (-1 for none). Folding only those events, in order, gives the whole fold,
# for no later event sets a key that an earlier decider set.
Deciders = tuple[int, ...]


class Walk(NamedTuple):
    """Per position, of the remaining events the event comes after:"""

    before: list[Deciders]  # their fold's deciders
    tops: list[int]  # as a mask, those that no other of them comes after
    # the deciders of the remaining events of its lineage: the event itself (unless
    # dropped) and those it comes after
    lineage: list[Deciders]


def walk(ancestry: Ancestry, sets: Sequence[tuple[bool, ...] | None], keys: int) -> Walk:
    """Every event's remaining predecessors in one pass over the order, each from its
    direct ones: what an event comes after is what they come after, and they.

    `sets[i]`: which of the `keys` keys the event at position i sets, None when it
    is dropped."""
    found = Walk([], [], [])
    lineage_tops: list[int] = []
    none: Deciders = (-1,) * keys
    for position, own in enumerate(sets):
        preds = ancestry.preds[position]
        if not preds:
            deciders, tops = none, 0
        elif len(preds) == 1:
            deciders, tops = found.lineage[preds[0]], lineage_tops[preds[0]]
        else:
            deciders, candidates = none, 0
            for pred in preds:
                deciders = tuple(map(max, deciders, found.lineage[pred]))
                candidates |= lineage_tops[pred]
            # a top of one predecessor's lineage may come before another's
            covered = 0
            for candidate in positions(candidates):
                covered |= ancestry.bits[candidate]
            tops = candidates & ~covered
        found.before.append(deciders)
        found.tops.append(tops)
        if own is None:
            found.lineage.append(deciders)
            lineage_tops.append(tops)
        else:
            found.lineage.append(
                tuple(position if s else d for s, d in zip(own, deciders, strict=True))
            )
            lineage_tops.append(1 << position)
    return found
