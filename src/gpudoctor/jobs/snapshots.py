"""Several snapshots, one per node (written by an epilogue), read as one job.

Each snapshot's kernel log becomes an input of its own whose lines belong to its node; its
facts are merged into the one flat namespace the rules test, each fact keeping the node it
came from when the nodes disagree. A fact that says something (an Xid, an oom-kill count, a
thermal slowdown: any value that is not null, false, zero or empty) wins over the same fact
saying nothing on another node, so that a fault on node B is not hidden by a healthy node A;
between two nodes that both say something, the first given wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.snapshot.model import Snapshot


@dataclass(frozen=True)
class NodeSnapshot:
    """A snapshot with the name it was given (its file) and the node it was taken on."""

    name: str
    snapshot: Snapshot

    @property
    def node(self) -> str:
        """The host name the snapshot recorded, else its file's name without suffix."""
        return self.snapshot.host.hostname or PurePath(self.name).stem or self.name


def _says_something(value: object) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return False
    return not (isinstance(value, (str, list, tuple, dict)) and not value)


def merge_facts(
    per_node: Sequence[tuple[str, Mapping[str, object]]],
) -> tuple[dict[str, object], dict[str, str]]:
    """The facts of several nodes as one namespace, and the node of each fact that differs.

    ``per_node`` is (node, facts) in the order the snapshots were given.
    """
    merged: dict[str, object] = {}
    nodes: dict[str, str] = {}
    names = list(dict.fromkeys(name for _, facts in per_node for name in facts))
    for name in names:
        values = [(node, facts.get(name)) for node, facts in per_node]
        telling = [(node, value) for node, value in values if _says_something(value)]
        known = [(node, value) for node, value in values if value is not None]
        chosen = telling[0] if telling else (known[0] if known else None)
        if chosen is None:
            merged[name] = None
            continue
        merged[name] = chosen[1]
        if len({repr(value) for _, value in values}) > 1:
            nodes[name] = chosen[0]
    return merged, nodes
