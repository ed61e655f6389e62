"""Renderers: pure functions from a :class:`~gpudoctor.report.Report` to text."""
