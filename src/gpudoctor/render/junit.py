"""JUnit XML rendering of a report (``explain``, ``diagnose``), for CI test-report views.

One ``<testcase>`` per diagnosis (``classname="gpudoctor.diagnosis"``, ``name`` the rule id):
a cause that counts as a failure under the threshold (``--fail-on`` and ``--min-confidence``;
with ``--fail-on never``, every cause at or over ``--min-confidence``) carries ``<failure>``
with the summary, evidence and fix; other causes and hints pass, with their text in
``<system-out>``. No diagnosis means no testcase. Built with :mod:`xml.etree.ElementTree`, so
text is always escaped; characters that XML 1.0 cannot hold (control characters a log may
carry) are written as ``\\xNN``. No times, so the output is reproducible.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpudoctor.report import Diagnosis, Report, Threshold

CLASSNAME = "gpudoctor.diagnosis"
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _body(diagnosis: Diagnosis) -> str:
    lines = [diagnosis.summary]
    if diagnosis.explained_by:
        lines.append(f"likely a consequence of: {', '.join(diagnosis.explained_by)}")
    for ev in diagnosis.evidence:
        if ev.fact is not None:
            lines.append(f"- {ev.fact} = {ev.value}")
        else:
            lines.append(f"- {ev.source}:{ev.line}: {ev.text.strip()}")
    lines.extend(f"fix {n}: {step}" for n, step in enumerate(diagnosis.fix, start=1))
    return _xml("\n".join(lines))


def _testcase(parent: ET.Element, diagnosis: Diagnosis, threshold: Threshold) -> None:
    case = ET.SubElement(parent, "testcase", {"classname": CLASSNAME, "name": diagnosis.rule})
    if threshold.counts(diagnosis):
        message = f"#{diagnosis.rank} {diagnosis.title} (confidence {diagnosis.confidence:.2f})"
        failure = ET.SubElement(
            case, "failure", {"message": _xml(message), "type": diagnosis.cause}
        )
        failure.text = _body(diagnosis)
    else:
        kind = "cause" if diagnosis.is_cause else "hint"
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"{kind}: {_xml(diagnosis.title)} (confidence {diagnosis.confidence:.2f})\n"
            + _body(diagnosis)
        )


def render_junit(report: Report, threshold: Threshold | None = None) -> str:
    """The report as a JUnit XML document (with an XML declaration, ending in a newline)."""
    threshold = threshold or Threshold()
    counts = {
        "tests": str(len(report.diagnoses)),
        "failures": str(sum(1 for d in report.diagnoses if threshold.counts(d))),
        "errors": "0",
        "skipped": "0",
    }
    root = ET.Element("testsuites", {"name": "gpudoctor", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": CLASSNAME, **counts})
    properties = ET.SubElement(suite, "properties")
    for item in report.inputs:
        value = item.name if item.error is None else f"{item.name} (not read: {item.error})"
        ET.SubElement(properties, "property", {"name": item.kind, "value": _xml(value)})
    for diagnosis in report.diagnoses:
        _testcase(suite, diagnosis, threshold)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
