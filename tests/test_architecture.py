"""The walls of DESIGN.md, checked by reading the imports of every module with ``ast``.

Nothing is imported: each source file under ``src/gpudoctor`` is parsed and its import
statements are resolved to module names. A failing check names the module, the line and the
import that breaks the wall.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).parents[1] / "src" / "gpudoctor"


@dataclass(frozen=True)
class Import:
    """One imported module, as written in one module."""

    source: str  # the importing module, e.g. "gpudoctor.cli.explain"
    target: str  # the imported module, e.g. "gpudoctor.pipeline" or "click"
    line: int
    top_level: bool  # executed when the module is imported (not inside a function)
    type_checking: bool  # inside ``if TYPE_CHECKING:``, never executed

    def __str__(self) -> str:
        where = "" if self.top_level else " (inside a function)"
        return f"{self.source} imports {self.target} (line {self.line}){where}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = source.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, top: bool, checking: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    for child in ast.iter_child_nodes(node):
        yield child, top, checking
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield from _walk(child, False, checking)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, top, True
                yield from _walk(stmt, top, True)
            for stmt in child.orelse:
                yield stmt, top, checking
                yield from _walk(stmt, top, checking)
        else:
            yield from _walk(child, top, checking)


def imports_of(source: str) -> list[Import]:
    """Every import in one module, each resolved to the module it loads."""
    path = MODULES[source]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []
    for node, top, checking in _walk(tree, True, False):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(source, alias.name, node.lineno, top, checking))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(source, path.name == "__init__.py", node)
            for alias in node.names:
                # ``from gpudoctor.render import text`` loads gpudoctor.render.text.
                candidate = f"{base}.{alias.name}"
                target = candidate if candidate in MODULES else base
                found.append(Import(source, target, node.lineno, top, checking))
    return found


ALL_IMPORTS: list[Import] = [i for module in MODULES for i in imports_of(module)]


def _within(target: str, prefixes: Iterable[str]) -> bool:
    return any(target == p or target.startswith(p + ".") for p in prefixes)


def _cycles(edges: Iterable[Import]) -> list[list[Import]]:
    """The cycles of the import graph (one per strongly connected part), as import chains."""
    graph: dict[str, dict[str, Import]] = {}
    for edge in edges:
        if edge.target in MODULES and edge.target != edge.source:
            graph.setdefault(edge.source, {}).setdefault(edge.target, edge)
    cycles: list[list[Import]] = []
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        stack: list[tuple[str, list[Import]]] = [(start, [])]
        seen: set[str] = set()
        while stack:
            node, chain = stack.pop()
            for target, edge in sorted(graph.get(node, {}).items()):
                if target == start:
                    cycles.append([*chain, edge])
                    stack.clear()
                    break
                if target not in seen:
                    seen.add(target)
                    stack.append((target, [*chain, edge]))
        done.add(start)
        if cycles and cycles[-1][0].source == start:
            done.update(edge.target for edge in cycles[-1])
    return cycles


def _explain(cycles: list[list[Import]]) -> str:
    return "\n".join("import cycle:\n  " + "\n  ".join(map(str, chain)) for chain in cycles)


def test_the_parser_sees_the_imports_it_should() -> None:
    """A guard for the checks below: they are only as good as the import parsing."""
    explain = {str(i.target) for i in ALL_IMPORTS if i.source == "gpudoctor.cli.explain"}
    assert {"click", "gpudoctor.cli.app", "gpudoctor.pipeline"} <= explain
    nvml = [i for i in ALL_IMPORTS if i.source == "gpudoctor.snapshot.nvml"]
    assert any(i.target == "pynvml" and not i.top_level for i in nvml)
    registry = [i for i in ALL_IMPORTS if i.source == "gpudoctor.render.registry"]
    assert any(i.target == "gpudoctor.check.model" and i.type_checking for i in registry)
    assert any(i.target == "gpudoctor.render.text" and not i.top_level for i in registry)
    assert _cycles(
        [
            Import("gpudoctor.report", "gpudoctor.engine", 1, True, False),
            Import("gpudoctor.engine", "gpudoctor.report", 1, True, False),
        ]
    )


def test_no_import_cycles_at_module_level() -> None:
    executed = [i for i in ALL_IMPORTS if i.top_level and not i.type_checking]
    cycles = _cycles(executed)
    assert not cycles, _explain(cycles)


def test_no_import_cycles_between_cli_modules_even_inside_functions() -> None:
    cli = [
        i
        for i in ALL_IMPORTS
        if not i.type_checking and _within(i.source, ["gpudoctor.cli"])
        if _within(i.target, ["gpudoctor.cli"])
    ]
    cycles = _cycles(cli)
    assert not cycles, _explain(cycles)


def test_cli_app_imports_no_command_module() -> None:
    """Commands are loaded by name (COMMANDS); the group never imports them itself."""
    bad = [
        i
        for i in ALL_IMPORTS
        if i.source in ("gpudoctor.cli.app", "gpudoctor.cli")
        and _within(i.target, ["gpudoctor.cli"])
        and i.target not in ("gpudoctor.cli.app",)
    ]
    assert not bad, "\n".join(map(str, bad))


RENDER_MAY_IMPORT = (
    "gpudoctor",  # the package itself, for __version__
    "gpudoctor.report",
    "gpudoctor.check.model",
    "gpudoctor.snapshot.model",
    "gpudoctor.units",
    "gpudoctor.wording",
)


def test_renderers_import_only_data_models_and_render_helpers() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _within(i.source, ["gpudoctor.render"])
        and i.target.startswith("gpudoctor")
        and i.target not in RENDER_MAY_IMPORT
        and not _within(i.target, ["gpudoctor.render"])
    ]
    assert not bad, "a renderer reaches past the data models:\n" + "\n".join(map(str, bad))


def test_renderers_do_not_print_or_parse_options() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _within(i.source, ["gpudoctor.render"]) and _within(i.target, ["click"])
    ]
    assert not bad, "\n".join(map(str, bad))


def test_only_the_nvml_collector_imports_pynvml() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _within(i.target, ["pynvml"]) and i.source != "gpudoctor.snapshot.nvml"
    ]
    assert not bad, "only gpudoctor.snapshot.nvml may import pynvml:\n" + "\n".join(map(str, bad))


def test_only_the_cli_imports_the_cli_and_click() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _within(i.target, ["gpudoctor.cli", "click"])
        and not _within(i.source, ["gpudoctor.cli"])
        and i.source != "gpudoctor.__main__"  # the entry point runs the CLI
    ]
    assert not bad, "only gpudoctor.cli may print, exit or parse options:\n" + "\n".join(
        map(str, bad)
    )


def test_the_core_never_imports_a_renderer() -> None:
    """Data flows one way: renderers come last, so only the CLI chooses and calls them."""
    bad = [
        i
        for i in ALL_IMPORTS
        if _within(i.target, ["gpudoctor.render"])
        and not _within(i.source, ["gpudoctor.cli", "gpudoctor.render"])
    ]
    assert not bad, "\n".join(map(str, bad))


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax", "jaxlib"])
def test_no_framework_is_ever_imported(framework: str) -> None:
    bad = [i for i in ALL_IMPORTS if _within(i.target, [framework])]
    assert not bad, "\n".join(map(str, bad))
