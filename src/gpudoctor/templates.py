"""Rule text templates: a rule's summary, explanation and fix steps filled with the values
the diagnosis found.

Fields are ``{name}``, ``{name:size}`` (bytes as "2.00 GiB"), ``{name:pct}`` (a fraction as
"34%") and ``{name:<python format spec>}``. Only plain names: attribute and index access
(``{name.__class__}``, ``{0}``) are left as written. Malformed braces leave the whole text as
written.

A value nobody found never prints as a placeholder. A field alone in a parenthetical —
``died ({signal});`` or ``(exit code {code})`` — drops with its parentheses; anywhere else it
says what is unknown: ``(pid unknown)``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

from gpudoctor.units import format_size


class _Formatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec == "size" and isinstance(value, (int, float)):
            return format_size(value)
        if format_spec == "pct" and isinstance(value, (int, float)):
            return f"{value * 100:.0f}%"
        try:
            return str(super().format_field(value, format_spec))
        except (ValueError, TypeError):
            return str(value)


_formatter = _Formatter()


def template_names(template: str) -> set[str]:
    """The plain names a template's fields use (empty for a malformed template)."""
    try:
        return {f for _, f, _, _ in _formatter.parse(template) if f and f.isidentifier()}
    except ValueError:
        return set()


def render_template(template: str, values: Mapping[str, object]) -> str:
    """Fill the template's fields from ``values`` (see the module documentation)."""
    return _render(template, values, [])


def unknown_fields(template: str, values: Mapping[str, object]) -> list[str]:
    """The fields :func:`render_template` prints as "(name unknown)" with these ``values``:
    a summary should word a value its format may lack away (``rules test`` checks)."""
    unknown: list[str] = []
    _render(template, values, unknown)
    return unknown


def _render(template: str, values: Mapping[str, object], unknown: list[str]) -> str:
    try:
        parts = list(_formatter.parse(template))
    except ValueError:
        return template
    out: list[str] = []
    drop_closing = False
    for index, (literal, field, spec, conversion) in enumerate(parts):
        if drop_closing:
            literal = literal[literal.index(")") + 1 :]
            written = "".join(out)
            if literal.startswith(" ") and (not written or written.endswith((" ", "\n"))):
                literal = literal[1:]
            drop_closing = False
        out.append(literal)
        if field is None:
            continue
        if not field.isidentifier():
            out.append("{" + field + "}")
            continue
        value = values.get(field)
        if value is not None:
            out.append(_format(value, spec or "", conversion))
            continue
        after = parts[index + 1][0] if index + 1 < len(parts) else None
        if _alone_in_parentheses(out[-1], after):
            out[-1] = _cut_open_parenthesis(out[-1])
            drop_closing = True
        else:
            unknown.append(field)
            out.append(f"({field.replace('_', ' ')} unknown)")
    return "".join(out)


def _format(value: object, spec: str, conversion: str | None) -> str:
    try:
        if conversion:
            value = _formatter.convert_field(value, conversion)
        return _formatter.format_field(value, spec)
    except (ValueError, TypeError):
        return str(value)


def _alone_in_parentheses(before: str, after: str | None) -> bool:
    """Whether the field is the only field of a parenthetical: ``(`` opens in the text before
    it (and is not closed there), and ``)`` closes the text after it before any ``(``."""
    if after is None or before.rfind("(") <= before.rfind(")"):
        return False
    closing = after.find(")")
    opening = after.find("(")
    return closing >= 0 and (opening < 0 or closing < opening)


def _cut_open_parenthesis(before: str) -> str:
    cut = before[: before.rfind("(")]
    return cut[:-1] if cut.endswith(" ") else cut
