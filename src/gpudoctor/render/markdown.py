"""The Markdown renderer: a report ready to paste into a GitHub issue, redacted by default."""

from __future__ import annotations

from collections.abc import Sequence

from gpudoctor.render.chart import WIDTH, timeline_chart
from gpudoctor.render.escape import autolink, code_span, fence, inline, prose
from gpudoctor.render.job_wording import consequence_line, job_lines, who
from gpudoctor.render.redact import redact
from gpudoctor.report import Report, RunSample


def render_markdown(report: Report, *, redact_output: bool = True) -> str:
    """The report as GitHub-flavoured Markdown.

    With ``redact_output`` (the default) user names, host names, addresses, tokens, GPU UUIDs
    and serial numbers in anything that came from the inputs are replaced by placeholders.
    Text from the inputs is escaped so that it cannot leave its code block or inject markup.
    """
    hosts = [str(v) for k, v in report.facts.items() if k in ("hostname", "host_name") and v]
    if report.job is not None:  # the nodes of a job are host names too
        hosts += report.job.nodes
    hosts += report.fact_nodes.values()

    def clean(text: str) -> str:
        return redact(text, hosts) if redact_output else text

    causes = report.causes
    lines = ["## gpudoctor report", ""]
    sources = ", ".join(
        f"{code_span(clean(i.name))} ({i.lines:,} lines)"
        if i.lines is not None
        else code_span(clean(i.name))
        for i in report.inputs
    )
    lines.append(f"gpudoctor {report.version} read {sources or 'no logs'}.")
    lines.append("")
    if report.job is not None:
        lines += [" ".join(f"**{prose(clean(s))}**" for s in job_lines(report.job, causes)), ""]
    if not causes:
        lines.append("No known failure signature was found.")
    else:
        lines += ["| # | Cause | Confidence | Rule |", "|---|---|---|---|"]
        for d in causes:
            lines.append(
                f"| {d.rank} | {inline(d.title)} ({code_span(d.cause)}) | {d.confidence:.2f} "
                f"| {code_span(d.rule)} |"
            )
    for d in causes:
        if d.consequence_of:
            lines += ["", f"- **{d.rank}.** {prose(clean(consequence_line(report, d)))}"]
            continue
        lines += ["", f"### {d.rank}. {inline(d.title)}", "", prose(clean(d.summary)), ""]
        if d.ranks or d.nodes:
            lines += [f"_From {prose(clean(who(d.ranks, d.nodes)))}_", ""]
        if d.explained_by:
            lines += [f"_Likely a consequence of: {inline(', '.join(d.explained_by))}_", ""]
        lines.append("<details><summary>Evidence</summary>")
        evidence = [
            clean(
                f"{ev.fact} = {ev.value}" + _on(report.fact_nodes.get(ev.fact))
                if ev.fact is not None
                else f"{ev.source}:{ev.line}: {ev.text}"
            )
            for ev in d.evidence
        ]
        lines += ["", *fence(evidence), "", "</details>", "", "**Fix**", ""]
        lines += [f"{n}. {prose(clean(step))}" for n, step in enumerate(d.fix, start=1)]
        if d.references:
            lines += ["", "References: " + ", ".join(autolink(r) for r in d.references)]
    hints = [d for d in report.diagnoses if not d.is_cause]
    if hints:
        lines += ["", "### Hints", ""]
        lines += [f"- **{inline(h.title)}**: {prose(clean(h.summary))}" for h in hints]
    lines += timeline_section(report.timeline)
    if redact_output:
        lines += ["", "<sub>User names, hosts, addresses, tokens and GPU UUIDs redacted.</sub>"]
    return "\n".join(lines) + "\n"


def _on(node: str | None) -> str:
    """`` (on node-b)`` after a fact taken from one node's snapshot of several."""
    return f" (on {node})" if node else ""


def timeline_section(samples: Sequence[RunSample]) -> list[str]:
    """The ``gpudoctor run`` timeline as a small chart per GPU (none without samples)."""
    chart = timeline_chart(samples)
    if not chart:
        return []
    seconds = samples[-1].t - samples[0].t
    step = seconds / min(WIDTH, len(samples))
    return [
        "",
        "### Timeline",
        "",
        f"Sampled while the job ran: {len(samples)} samples over {seconds:.0f} s, one "
        f"character for about {step:.1f} s showing the highest value in it. Memory is drawn "
        "from 0 to its limit (a full block is a full GPU), temperature from its lowest to its "
        "highest reading.",
        "",
        *fence(chart),
    ]
