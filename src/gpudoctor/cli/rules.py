"""``gpudoctor rules``: list, show, lint and test rules."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from gpudoctor.cli.app import EXIT_FINDING, EXIT_USAGE, fail, load_book
from gpudoctor.errors import RuleError
from gpudoctor.rulebook.model import Rule
from gpudoctor.wording import count_of


@click.group()
def rules() -> None:
    """List, show, lint and test rules (the bundled pack and your own)."""


def _rule_paths(paths: tuple[Path, ...]) -> list[Path]:
    from gpudoctor.rulebook.files import bundled_rules_dir

    return list(paths) or [bundled_rules_dir()]


@rules.command("list")
@click.option("--rules", "rule_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Also list the rules in this directory (repeatable).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
def rules_list(rule_dirs: tuple[Path, ...], fmt: str) -> None:
    """List the rules: id, cause, role, severity and title."""
    book = load_book(rule_dirs)
    if fmt == "json":
        import json

        rows = [
            {"id": r.id, "cause": r.cause, "role": r.role.value, "severity": r.severity.value,
             "confidence": r.confidence, "title": r.title, "path": r.path}
            for r in book.rules
        ]  # fmt: skip
        click.echo(json.dumps(rows, indent=2))
        return
    id_width = max((len(r.id) for r in book.rules), default=2)
    cause_width = max((len(r.cause) for r in book.rules), default=5)
    for rule in sorted(book.rules, key=lambda r: (r.cause, r.id)):
        click.echo(
            f"{rule.id:<{id_width}}  {rule.cause:<{cause_width}}  {rule.role.value:<12}  "
            f"{rule.severity.value:<8}  {rule.title}"
        )
    click.echo(count_of(len(book.rules), "rule"))


@rules.command("show")
@click.argument("rule_id")
@click.option("--rules", "rule_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))  # fmt: skip
def rules_show(rule_id: str, rule_dirs: tuple[Path, ...]) -> None:
    """Print one rule's file, as written."""
    book = load_book(rule_dirs)
    rule = book.get(rule_id)
    if rule is None:
        import difflib

        close = difflib.get_close_matches(rule_id, [r.id for r in book.rules], n=3)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        fail(f'no rule "{rule_id}"{hint}; see `gpudoctor rules list`', EXIT_USAGE)
    if Path(rule.path).stem == rule.id:
        click.echo(f"# {rule.path}")
        click.echo(Path(rule.path).read_text(encoding="utf-8"), nl=False)
        return
    # A rule generated from one entry of a catalogue: show that rule, not the whole catalogue.
    import yaml

    shown = {
        "id": rule.id,
        "cause": rule.cause,
        "title": rule.title,
        "severity": rule.severity.value,
        "role": rule.role.value,
        "confidence": rule.confidence,
        "patterns": [{"id": p.id, "regex": p.regex} for p in rule.patterns],
        "summary": rule.summary,
        "fix": list(rule.fix),
        "references": list(rule.references),
    }
    click.echo(f"# generated from an entry of the catalogue {rule.path}")
    click.echo(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, width=100), nl=False)


@rules.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--disable", "disabled", multiple=True, metavar="CHECK",
              help="Turn one check off (repeatable); see --list-checks.")  # fmt: skip
@click.option("--list-checks", is_flag=True, help="List the checks, their ids and levels.")
def rules_lint(
    paths: tuple[Path, ...], strict: bool, disabled: tuple[str, ...], list_checks: bool
) -> None:
    """Check rule files (default: the bundled pack); print every problem as path:line:col,
    with the id of the check that found it."""
    from gpudoctor.rulebook.lint import CHECKS, describe_checks, lint_rules

    if list_checks:
        width = max(len(check_id) for check_id in CHECKS)
        for check_id, level, doc in describe_checks():
            click.echo(f"{check_id:<{width}}  {level:<7}  {doc}")
        return
    for check_id in disabled:
        if check_id not in CHECKS:
            import difflib

            close = difflib.get_close_matches(check_id, list(CHECKS), n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            fail(f'unknown check "{check_id}"{hint}; see `gpudoctor rules lint --list-checks`',
                 EXIT_USAGE)  # fmt: skip
    own, errors, _ = _load_targets(paths)
    findings = lint_rules(own, disabled=disabled)
    for error in errors:
        click.echo(f"{error.location}: error: {error.message}")
    for finding in findings:
        click.echo(str(finding))
    lint_errors = sum(1 for f in findings if f.level == "error")
    warnings = len(findings) - lint_errors
    click.echo(
        f"{count_of(len(own), 'rule')} checked: {count_of(len(errors) + lint_errors, 'error')}, "
        f"{count_of(warnings, 'warning')}"
    )
    if errors or lint_errors or (strict and warnings):
        sys.exit(EXIT_USAGE)


def _load_targets(
    paths: tuple[Path, ...],
) -> tuple[list[Rule], list[RuleError], tuple[Rule, ...]]:
    """The rules in ``paths`` (default: the bundled pack), the errors found in them, and
    every rule loaded (the pack they are used with).

    Rule files given by path are loaded beside the bundled pack, as ``--rules`` would use
    them, so that their ``explains`` may name bundled rules and their ids must not clash.
    """
    from gpudoctor.rulebook.files import bundled_rules_dir
    from gpudoctor.rulebook.loader import load_rules

    targets = _rule_paths(paths)
    context = [bundled_rules_dir()] if paths else []
    loaded = load_rules([*context, *targets], collect=True)
    target_files = {p.resolve() for p in _expand(targets)}
    own = [r for r in loaded.rules if Path(r.path).resolve() in target_files]
    errors = [
        e for e in loaded.errors if Path(e.location.path).resolve() in target_files or not paths
    ]
    return own, errors, tuple(loaded.rules)


def _expand(paths: Sequence[Path]) -> list[Path]:
    from gpudoctor.rulebook.files import rule_files

    return rule_files(paths)


@rules.command("test")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("-v", "--verbose", is_flag=True, help="List every example, not only failures.")
def rules_test(paths: tuple[Path, ...], verbose: bool) -> None:
    """Run every rule's examples: each `match` text must fire it, each `no_match` must not.

    Each example goes through the pipeline of `explain`, with the whole pack (the bundled one
    beside rule files given by path): structure facts, compatibility verdicts and all."""
    from gpudoctor.rulebook.book import RuleBook
    from gpudoctor.rulebook.selftest import run_examples

    own, errors, pack = _load_targets(paths)
    if errors:
        for error in errors:
            click.echo(str(error), err=True)
        fail(f"{len(errors)} error(s) in the rules; no example was run", EXIT_USAGE)
    results = run_examples(own, RuleBook(pack))
    failed = [r for r in results if not r.passed]
    for result in results if verbose else failed:
        status = "ok  " if result.passed else "FAIL"
        click.echo(f"{status} {result.describe()}")
    click.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        sys.exit(EXIT_FINDING)


@rules.command("facts")
@click.option("--format", "fmt", type=click.Choice(("text", "json", "markdown")), default="text")
def rules_facts(fmt: str) -> None:
    """List every fact rules can test: name, type, unit, source and meaning (generated from
    the declarations of the snapshot, the compatibility verdicts and the structure readers)."""
    from gpudoctor.facts.registry import registry

    facts = sorted(registry().values(), key=lambda f: f.name)
    if fmt == "json":
        import json

        rows = [
            {"name": f.name, "type": f.type, "unit": f.unit, "sources": list(f.sources),
             "doc": {s.source: s.doc for s in f.specs}}
            for f in facts
        ]  # fmt: skip
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if fmt == "markdown":
        click.echo("| fact | type | unit | source | meaning |")
        click.echo("|---|---|---|---|---|")
        for fact in facts:
            for spec in fact.specs:
                cells = (f"`{fact.name}`", f"`{spec.type}`", spec.unit, spec.source, spec.doc)
                click.echo("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        return
    width = max(len(f.name) for f in facts)
    for fact in facts:
        for spec in fact.specs:
            click.echo(f"{fact.name:<{width}}  {spec.type:<14}  {spec.unit:<6}  "
                       f"{spec.source:<14}  {spec.doc}")  # fmt: skip
    click.echo(f"{len(facts)} facts")
