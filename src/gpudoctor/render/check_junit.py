"""JUnit XML rendering of a ``gpudoctor check`` report, for CI test-report views.

One ``<testcase>`` per check (``classname="gpudoctor.check"``, ``name`` the check id): a
failed check carries ``<failure>``, a skipped one ``<skipped>``, a warning passes with its
text in ``<system-out>``. Built with :mod:`xml.etree.ElementTree`, so the text is always
escaped and the XML well formed; no times or timestamps, so the output is reproducible.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from gpudoctor.check.model import CheckReport, CheckResult, Status

CLASSNAME = "gpudoctor.check"


def _body(result: CheckResult) -> str:
    lines = [result.reason]
    if result.fix:
        lines.append(f"fix: {result.fix}")
    lines.extend(f"- {d}" for d in result.details)
    return "\n".join(lines)


def _testcase(parent: ET.Element, result: CheckResult) -> None:
    case = ET.SubElement(parent, "testcase", {"classname": CLASSNAME, "name": result.id})
    if result.status is Status.FAIL:
        failure = ET.SubElement(case, "failure", {"message": result.reason, "type": "fail"})
        failure.text = _body(result)
    elif result.status is Status.SKIP:
        ET.SubElement(case, "skipped", {"message": result.reason})
    else:
        out = ET.SubElement(case, "system-out")
        prefix = "WARNING: " if result.status is Status.WARN else ""
        out.text = prefix + _body(result)


def render_check_junit(report: CheckReport) -> str:
    """The report as a JUnit XML document (with an XML declaration, ending in a newline)."""
    counts = {
        "tests": str(len(report.results)),
        "failures": str(report.count(Status.FAIL)),
        "errors": "0",
        "skipped": str(report.count(Status.SKIP)),
    }
    root = ET.Element("testsuites", {"name": "gpudoctor check", **counts})
    attrs = {"name": CLASSNAME, **counts}
    if report.source.hostname:
        attrs["hostname"] = report.source.hostname
    suite = ET.SubElement(root, "testsuite", attrs)
    properties = ET.SubElement(suite, "properties")
    source = report.source
    for name, value in (("source", source.kind), ("snapshot", source.path)):
        if value:
            ET.SubElement(properties, "property", {"name": name, "value": value})
    for result in report.results:
        _testcase(suite, result)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
