"""Renderers: pure functions from a document (report, check report, snapshot) to text.

:mod:`gpudoctor.render.registry` holds the one interface they meet and the formats of each
kind of document; renderers read data models only, never collection, reading or CLI code.
"""
