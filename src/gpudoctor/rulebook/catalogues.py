"""Catalogues: a vendor's list of error codes held as data, turned into rules at load time.

A catalogue is a YAML file among the rules (the bundled ones live in ``rules/catalogues/``)
whose top-level mapping has a ``catalogue`` key. Each entry becomes one rule, role ``generic``
by default: a cause recognised by a general signature, folded into a specific rule of the same
cause when one fired (see :class:`gpudoctor.rulebook.model.Role`). The format::

    catalogue: cuda-runtime-errors       # id prefix: rule id = "<catalogue>-<entry id>"
    title: CUDA runtime and driver API errors
    sources: [https://...]               # the references of every generated rule
    camel_names: true                    # optional: SCREAMING_SNAKE names also match as the
                                         # lowerCamel spellings of wrappers (see camel_spellings)
    defaults: {severity: error, confidence: 0.6, role: generic}   # cause may be given too
    match:                               # templates (optional; default: '\\b{name}\\b', '{text}')
      - '\\b{name}\\b'                   # {name}: the entry's names, regex-escaped
      - '{text}'                         # {text}: the entry's texts, regex-escaped
      - 'CUDA error(?: code)?[ =:]+{number}\\b'   # {number}: the entry's number
      - 'CUDA error: {framed_text}'      # {framed_text}: texts that only count when framed
      - 'CudaError::{framed_name}'       # {framed_name}: names that only count when framed
    examples:                            # example templates (optional), rendered per entry
      - 'RuntimeError: CUDA error: {framed_text}'
    fixes:                               # fix steps per cause, for entries without "fix"
      illegal_memory_access: ['...']
    entries:
      - id: illegal-address
        number: 700                      # optional
        names: [cudaErrorIllegalAddress, CUDA_ERROR_ILLEGAL_ADDRESS]
        texts: ['an illegal memory access was encountered']  # only texts that stand alone
        framed_texts: []                 # generic texts ("out of memory"): {framed_text} only
        framed_names: [IllegalAddress]   # a wrapper's names (or numbers) for the code, too
                                         # plain to stand alone (a Rust enum's variants, a
                                         # VkResult printed as -4): {framed_name} only
        cause: illegal_memory_access     # or defaults.cause
        title: '...'                     # optional: built from the first name, number, text
        meaning: '...'                   # the summary; with the catalogue title, the explanation
        fix: ['...']                     # optional: overrides fixes[cause]
        confidence: 0.7                  # optional, as are severity and role
        examples: {match: [...], no_match: [...]}   # optional, added to the generated ones

A template yields one pattern for an entry when the entry has every placeholder the template
uses (a template with ``{number}`` only for entries with a number); a placeholder with several
values becomes one alternation, ``(?:a|b)``, so each template is one regex. Examples are
generated too: every name and text must make the rule fire, as must each example template
rendered with each of the entry's values; another entry's first name (and a
name with a letter appended) must not. A catalogue's mistakes are reported ``path:line:col``
like a rule's; ids are checked across the pack by the loader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import re2
import yaml

from gpudoctor import yamlnodes as yn
from gpudoctor.errors import RuleError, SourceLocation
from gpudoctor.logs.scanner import compile_pattern
from gpudoctor.rulebook.loader import _RuleParser, _suggest
from gpudoctor.rulebook.model import Example, Pattern, Role, Rule
from gpudoctor.rulebook.taxonomy import causes

CATALOGUE_KEY = "catalogue"
_KEYS = {
    "catalogue", "title", "sources", "camel_names", "defaults", "match", "examples", "fixes",
    "entries",
}  # fmt: skip
_DEFAULT_KEYS = {"severity", "confidence", "role", "cause"}
_ENTRY_KEYS = {
    "id", "number", "names", "texts", "framed_texts", "framed_names", "cause", "title", "meaning",
    "fix", "confidence", "severity", "role", "examples",
}  # fmt: skip
_PLACEHOLDER = re.compile(r"\{(name|text|framed_text|framed_name|number)\}")
DEFAULT_TEMPLATES = (r"\b{name}\b", "{text}")


def is_catalogue(root: yaml.Node) -> bool:
    """Whether a composed YAML document is a catalogue (a mapping with ``catalogue:``)."""
    return isinstance(root, yaml.MappingNode) and any(
        isinstance(k, yaml.ScalarNode) and k.value == CATALOGUE_KEY for k, _ in root.value
    )


@dataclass(frozen=True)
class _Template:
    regex: str
    placeholders: frozenset[str]
    node: yaml.Node


@dataclass
class _Entry:
    id: str
    node: yaml.Node
    number: int | None
    names: tuple[str, ...]
    texts: tuple[str, ...]
    framed_texts: tuple[str, ...]
    framed_names: tuple[str, ...]
    values: dict[str, object]


class _CatalogueParser(_RuleParser):
    """Reads a catalogue with the rule parser's checked field readers."""

    def parse_catalogue(self, root: yaml.Node) -> list[Rule]:
        entries = self._entries(root, "a catalogue", _KEYS, ("catalogue", "title", "entries"))
        prefix = self._field_id(entries["catalogue"].value)
        title = self._text(entries["title"].value, '"title"')
        sources = self._field_references(entries["sources"].value) if "sources" in entries else ()
        defaults = self._defaults(entries["defaults"].value) if "defaults" in entries else {}
        templates = (
            self._templates(entries["match"].value)
            if "match" in entries
            else tuple(
                _Template(t, _placeholders(t), entries["catalogue"].value)
                for t in DEFAULT_TEMPLATES
            )
        )
        fixes = self._fixes(entries["fixes"].value) if "fixes" in entries else {}
        shown = (
            self._strings(entries["examples"].value, '"examples"') if "examples" in entries else ()
        )
        nodes = yn.sequence_items(entries["entries"].value, self.path, '"entries"')
        items = [self._entry(node) for node in nodes]
        parsed = [e for e in items if e is not None]
        if "camel_names" in entries and yn.scalar(
            entries["camel_names"].value, self.path, '"camel_names"', bool
        ):
            for entry in parsed:
                entry.names = _with_camel_spellings(entry.names)
        rules = []
        for index, entry in enumerate(parsed):
            others = [o for o in parsed[index + 1 :] + parsed[:index] if o.names]
            try:
                rules.append(
                    self._rule(prefix, title, sources, defaults, templates, fixes, entry, others)
                )
                rules[-1] = _with_examples(rules[-1], shown, entry)
            except yn.NodeError as exc:
                self.errors.append(RuleError(exc.location, exc.message))
        return rules

    def _defaults(self, node: yaml.Node) -> dict[str, object]:
        entries = self._entries(node, '"defaults"', _DEFAULT_KEYS, ())
        return {key: getattr(self, f"_field_{key}")(e.value) for key, e in entries.items()}

    def _templates(self, node: yaml.Node) -> tuple[_Template, ...]:
        templates = []
        for item in yn.sequence_items(node, self.path, '"match"'):
            regex = self._text(item, "a match template")
            found = _placeholders(regex)
            if not found:
                raise yn.NodeError(
                    yn.location(self.path, item),
                    "a match template needs {name}, {text}, {framed_text}, {framed_name} or "
                    "{number}",
                )
            templates.append(_Template(regex, found, item))
        return tuple(templates)

    def _fixes(self, node: yaml.Node) -> dict[str, tuple[str, ...]]:
        fixes = {}
        for entry in yn.mapping_entries(node, self.path, '"fixes"'):
            if entry.key not in causes():
                raise yn.NodeError(
                    yn.location(self.path, entry.key_node),
                    f'unknown cause "{entry.key}"{_suggest(entry.key, causes())}',
                )
            fixes[entry.key] = self._field_fix(entry.value)
        return fixes

    def _entry(self, node: yaml.Node) -> _Entry | None:
        try:
            entries = self._entries(node, "an entry", _ENTRY_KEYS, ("id", "meaning"))
            values: dict[str, object] = {}
            for key in ("cause", "title", "fix", "confidence", "severity", "role", "examples"):
                if key in entries:
                    values[key] = getattr(self, f"_field_{key}")(entries[key].value)
            values["meaning"] = self._text(entries["meaning"].value, '"meaning"')
            number = None
            if "number" in entries:
                raw = yn.scalar(entries["number"].value, self.path, '"number"', int)
                assert isinstance(raw, int)
                number = raw
            names = self._strings(entries["names"].value, '"names"') if "names" in entries else ()
            texts = self._strings(entries["texts"].value, '"texts"') if "texts" in entries else ()
            framed = (
                self._strings(entries["framed_texts"].value, '"framed_texts"')
                if "framed_texts" in entries
                else ()
            )
            framed_names = (
                self._strings(entries["framed_names"].value, '"framed_names"')
                if "framed_names" in entries
                else ()
            )
            if not (names or texts or framed or framed_names) and number is None:
                raise yn.NodeError(
                    yn.location(self.path, node),
                    'an entry needs "names", "texts", "framed_texts", "framed_names" or "number"',
                )
            entry_id = self._field_id(entries["id"].value)
            return _Entry(entry_id, node, number, names, texts, framed, framed_names, values)
        except yn.NodeError as exc:
            self.errors.append(RuleError(exc.location, exc.message))
            return None

    def _rule(
        self,
        prefix: str,
        title: str,
        sources: tuple[str, ...],
        defaults: dict[str, object],
        templates: tuple[_Template, ...],
        fixes: dict[str, tuple[str, ...]],
        entry: _Entry,
        others: list[_Entry],
    ) -> Rule:
        where = yn.location(self.path, entry.node)
        values = {**defaults, **entry.values}
        cause = values.get("cause")
        if not isinstance(cause, str):
            raise yn.NodeError(where, 'an entry needs "cause" (or "defaults.cause")')
        fix = values.get("fix") or fixes.get(cause)
        if not fix:
            raise yn.NodeError(where, f'an entry needs "fix" (or "fixes.{cause}")')
        for key in ("confidence", "severity"):
            if key not in values:
                raise yn.NodeError(where, f'an entry needs "{key}" (or "defaults.{key}")')
        patterns = self._patterns(templates, entry, where)
        if not patterns:
            raise yn.NodeError(where, "no match template applies to this entry")
        given = values.get("examples", ((), ()))
        assert isinstance(given, tuple)
        match = tuple(Example(text=t, location=where) for t in (*entry.names, *entry.texts))
        no_match: tuple[Example, ...] = ()
        if entry.names:
            no_match = (Example(text=entry.names[0] + "X", location=where),)
        if others:
            no_match += (Example(text=others[0].names[0], location=where),)
        meaning = str(values["meaning"])
        return Rule(
            id=f"{prefix}-{entry.id}",
            cause=cause,
            title=str(values.get("title") or _title(entry)),
            severity=values["severity"],  # type: ignore[arg-type]
            role=values.get("role", Role.GENERIC),  # type: ignore[arg-type]
            confidence=float(values["confidence"]),  # type: ignore[arg-type]
            summary=meaning,
            explanation=f"{meaning}\n\nRecognised from the catalogue: {title}.",
            fix=fix,  # type: ignore[arg-type]
            references=sources,
            patterns=patterns,
            examples_match=match + given[0],
            examples_no_match=no_match + given[1],
            path=self.path,
        )

    def _patterns(
        self, templates: tuple[_Template, ...], entry: _Entry, where: SourceLocation
    ) -> tuple[Pattern, ...]:
        values = _values(entry)
        patterns: list[Pattern] = []
        for template in templates:
            if not all(values[p] for p in template.placeholders):
                continue
            regex = _PLACEHOLDER.sub(lambda m: _alternation(values[m.group(1)]), template.regex)
            try:
                compile_pattern(regex)
            except re2.error as exc:
                raise yn.NodeError(
                    yn.location(self.path, template.node),
                    f"invalid RE2 regex for entry {entry.id}: {exc}",
                ) from exc
            base = "_".join(sorted(template.placeholders))
            pattern_id = base
            taken = {p.id for p in patterns}
            suffix = 2
            while pattern_id in taken:
                pattern_id, suffix = f"{base}{suffix}", suffix + 1
            patterns.append(Pattern(id=pattern_id, regex=regex, location=where))
        return tuple(patterns)


_SCREAMING = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def camel_spellings(name: str) -> tuple[str, ...]:
    """The lowerCamel spellings that wrappers give a SCREAMING_SNAKE status name.

    ctypes bindings name their exception classes after the status: libcudnn.py raises
    ``cudnnStatusArchMismatch`` for CUDNN_STATUS_ARCH_MISMATCH, scikit-cuda ``cublasAllocFailed``
    for CUBLAS_STATUS_ALLOC_FAILED (without "Status") and ``cufftExecFailed`` for
    CUFFT_EXEC_FAILED. A name not in that shape has none.
    """
    if not _SCREAMING.fullmatch(name):
        return ()
    head, *words = name.split("_")

    def camel(parts: list[str]) -> str:
        return head.lower() + "".join(w.capitalize() for w in parts)

    without_status = [w for w in words if w != "STATUS"]
    spellings = [camel(words)]
    if without_status and without_status != words:
        spellings.append(camel(without_status))
    return tuple(spellings)


def _with_camel_spellings(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*names, *(s for n in names for s in camel_spellings(n))]))


def _values(entry: _Entry) -> dict[str, tuple[str, ...]]:
    return {
        "name": entry.names,
        "text": entry.texts,
        "framed_text": entry.framed_texts,
        "framed_name": entry.framed_names,
        "number": (str(entry.number),) if entry.number is not None else (),
    }


def _with_examples(rule: Rule, shown: tuple[str, ...], entry: _Entry) -> Rule:
    """``rule`` with the catalogue's example templates rendered for this entry: one example per
    value of a template's placeholders, for each template whose placeholders the entry has."""
    values = _values(entry)
    where = rule.examples_match[0].location if rule.examples_match else None
    extra = []
    for template in shown:
        used = _placeholders(template)
        if not used or not all(values[p] for p in used):
            continue
        for name in sorted(used):
            for value in values[name]:
                text = template.replace("{" + name + "}", value)
                text = _PLACEHOLDER.sub(lambda m: values[m.group(1)][0], text)
                extra.append(text)
    if not extra:
        return rule
    added = tuple(Example(text=t, location=where) for t in dict.fromkeys(extra))
    return replace(rule, examples_match=rule.examples_match + added)


def _placeholders(template: str) -> frozenset[str]:
    return frozenset(_PLACEHOLDER.findall(template))


def _alternation(values: tuple[str, ...]) -> str:
    escaped = [_escape(v) for v in values]
    return escaped[0] if len(escaped) == 1 else "(?:" + "|".join(escaped) + ")"


_META = re.compile(r"([\\.^$|?*+()\[\]{}])")


def _escape(text: str) -> str:
    """``text`` as a literal regex: only RE2's metacharacters escaped (spaces, quotes and
    colons stay readable, and lint reads them as literal text)."""
    return _META.sub(r"\\\1", text)


def _title(entry: _Entry) -> str:
    label = entry.names[0] if entry.names else (entry.texts[0] if entry.texts else "error")
    number = f" ({entry.number})" if entry.number is not None else ""
    text = f": {entry.texts[0]}" if entry.names and entry.texts else ""
    return f"{label}{number}{text}"


def load_catalogue(root: yaml.Node, path: str) -> tuple[list[Rule], list[RuleError]]:
    """The rules a composed catalogue generates, and every error found in it; when there is
    any error no rule is returned, as for a rule file."""
    parser = _CatalogueParser(path)
    try:
        rules = parser.parse_catalogue(root)
    except yn.NodeError as exc:
        parser.errors.append(RuleError(exc.location, exc.message))
        rules = []
    return (rules if not parser.errors else []), parser.errors
