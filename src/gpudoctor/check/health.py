"""The ``gpu-health`` check: the GPUs' own health, judged exactly as ``diagnose`` judges it.

``diagnose`` flags uncorrectable ECC errors, pending or failed row remapping and page
retirement, thermal / hardware slowdown and power brake, and a PCIe link below its width
through the snapshot rules ``rules/snapshot-*.yaml`` over the facts of
:mod:`gpudoctor.facts.machine`. This check evaluates those same rules on the same facts, so
the two commands cannot disagree about one machine: a rule of severity ``critical`` that
fires fails the check, one of severity ``warning`` warns. The summary and the first fix step
are the rule's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpudoctor.check.context import CheckContext
from gpudoctor.check.model import CheckResult, Status, worst

if TYPE_CHECKING:
    from gpudoctor.rulebook.model import Rule

CHECK_ID = "gpu-health"
TITLE = "GPU health (ECC, row remapping, throttling, PCIe link)"

#: The snapshot rules about the GPUs' own health. A lost GPU is the ``gpus`` check's, and
#: the kernel log (Xid) is not read by ``check``.
HEALTH_RULES = (
    "snapshot-ecc-memory-error",
    "snapshot-thermal-power",
    "snapshot-pcie-link-degraded",
)

_STATUS = {"critical": Status.FAIL, "error": Status.FAIL, "warning": Status.WARN}


def health_rules() -> list[Rule]:
    """The bundled rules this check evaluates.

    Raises:
        RuleError: a bundled rule file is missing or invalid (a broken installation).
    """
    from gpudoctor.rulebook.files import bundled_rules_dir
    from gpudoctor.rulebook.loader import load_rule_file

    folder = bundled_rules_dir()
    rules: list[Rule] = []
    for rule_id in HEALTH_RULES:
        rule, errors = load_rule_file(folder / f"{rule_id}.yaml")
        if rule is None:
            raise errors[0]
        rules.append(rule)
    return rules


def check_gpu_health(ctx: CheckContext) -> CheckResult:
    """No GPU reports memory errors, throttling or a degraded link (the snapshot rules)."""
    skip = ctx.gpu_skip_reason()
    if skip is not None:
        return CheckResult(CHECK_ID, TITLE, Status.SKIP, f"{skip}.")
    from gpudoctor.engine import evaluate_rule
    from gpudoctor.facts.machine import snapshot_facts
    from gpudoctor.templates import render_template

    facts = snapshot_facts(ctx.snapshot)
    found: list[tuple[Status, str, str | None, str]] = []
    for rule in health_rules():
        finding = evaluate_rule(rule, {}, facts)
        if finding is None:
            continue
        status = _STATUS.get(rule.severity.value, Status.WARN)
        summary = render_template(rule.summary, finding.values)
        fix = render_template(rule.fix[0], finding.values) if rule.fix else None
        found.append((status, summary, fix, rule.id))
    checked = f"{len(ctx.usable_gpus)} GPU(s)"
    if not found:
        return CheckResult(
            CHECK_ID,
            TITLE,
            Status.PASS,
            f"{checked}: no ECC or row-remapping errors, no slowdown, PCIe links at full width.",
        )
    status = worst(s for s, *_ in found)
    return CheckResult(
        CHECK_ID,
        TITLE,
        status,
        " ".join(summary for s, summary, _fix, _id in found if s is status),
        " ".join(dict.fromkeys(fix for s, _summary, fix, _id in found if s is status and fix))
        or None,
        tuple(f"{rule_id}: {summary}" for _s, summary, _fix, rule_id in found),
    )
