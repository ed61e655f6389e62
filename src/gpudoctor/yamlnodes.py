"""Reading YAML with positions: every value keeps the line and column it came from.

PyYAML's safe composer gives nodes with marks; this module turns them into plain values while
rejecting duplicate keys, so that loaders can report ``path:line:col`` for any mistake.
``yaml.load`` is never used.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import yaml

from gpudoctor.errors import SourceLocation

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_constructor = yaml.constructor.SafeConstructor()


class NodeError(Exception):
    """A YAML mistake at a location."""

    def __init__(self, location: SourceLocation, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.message = message


def location(path: str, node: yaml.Node) -> SourceLocation:
    """The 1-based location where ``node`` starts."""
    mark = node.start_mark
    return SourceLocation(path, mark.line + 1, mark.column + 1)


def compose(text: str, path: str, *, aliases: bool = True) -> yaml.Node | None:
    """Parse one YAML document into nodes; syntax errors become :class:`NodeError`.

    With ``aliases=False`` (files from users, such as rules) a document that uses an anchor
    and alias (``&name`` … ``*name``) is refused at the anchored node: aliases let a small
    file stand for an exponentially large value ("billion laughs").
    """
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = SourceLocation(path, mark.line + 1, mark.column + 1) if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise NodeError(where or SourceLocation(path, 1, 1), f"invalid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise NodeError(SourceLocation(path, 1, 1), f"invalid YAML: {exc}") from exc
    if root is not None and not aliases:
        shared = _first_shared_node(root)
        if shared is not None:
            raise NodeError(
                location(path, shared),
                "YAML anchors and aliases (&name, *name) are not allowed here; write the value out",
            )
    return root


def _first_shared_node(root: yaml.Node) -> yaml.Node | None:
    """A node reached twice (only an alias does that), or ``None``; each node visited once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return node
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                stack.extend((value, key))
    return None


@dataclass(frozen=True)
class Entry:
    """One key of a mapping with its value node."""

    key: str
    key_node: yaml.Node
    value: yaml.Node


def mapping_entries(node: yaml.Node, path: str, what: str) -> Iterator[Entry]:
    """Iterate a mapping's entries, rejecting non-mappings, non-string and duplicate keys."""
    if not isinstance(node, yaml.MappingNode):
        raise NodeError(location(path, node), f"{what} must be a mapping")
    seen: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
            raise NodeError(location(path, key_node), f"keys of {what} must be strings")
        key = str(key_node.value)
        if key in seen:
            first = location(path, seen[key])
            raise NodeError(
                location(path, key_node),
                f'duplicate key "{key}" (first at line {first.line})',
            )
        seen[key] = key_node
        yield Entry(key, key_node, value_node)


def sequence_items(node: yaml.Node, path: str, what: str) -> list[yaml.Node]:
    """The items of a sequence node."""
    if not isinstance(node, yaml.SequenceNode):
        raise NodeError(location(path, node), f"{what} must be a list")
    return list(node.value)


def scalar(node: yaml.Node, path: str, what: str, kind: type | tuple[type, ...]) -> object:
    """A scalar value of the expected Python type(s)."""
    if not isinstance(node, yaml.ScalarNode):
        raise NodeError(location(path, node), f"{what} must be a {_type_name(kind)}")
    value = _construct(node, path)
    if isinstance(value, bool) and bool not in _as_tuple(kind):
        raise NodeError(location(path, node), f"{what} must be a {_type_name(kind)}")
    if not isinstance(value, kind):
        raise NodeError(location(path, node), f"{what} must be a {_type_name(kind)}")
    return value


def plain(node: yaml.Node, path: str = "") -> object:
    """Any node as plain Python data (mappings, lists, scalars).

    Raises :class:`NodeError` where the data cannot be built (a list used as a mapping key).
    """
    return _construct(node, path, deep=True)


def _construct(node: yaml.Node, path: str, *, deep: bool = False) -> object:
    """Build a node's value; what cannot be built (an unknown ``!tag``, an unhashable key) is a
    :class:`NodeError` at its place in the file."""
    try:
        return _constructor.construct_object(node, deep=deep)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or node.start_mark
        where = SourceLocation(path, mark.line + 1, mark.column + 1)
        raise NodeError(where, getattr(exc, "problem", None) or str(exc)) from None


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _type_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "string", int: "number", float: "number", bool: "boolean"}
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in _as_tuple(kind)))


def load_data(text: str, path: str) -> object:
    """Parse a trusted data file (bundled tables) into plain Python data with the C loader
    when available; syntax errors become :class:`NodeError`."""
    node = compose(text, path)
    return None if node is None else plain(node)
