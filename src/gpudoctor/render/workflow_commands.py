"""GitHub Actions workflow commands (``::error title=...::message``), escaped.

Escaping follows GitHub's toolkit (``@actions/core`` command.ts): in the message ``%``,
``\\r``, ``\\n`` become ``%25``, ``%0D``, ``%0A``; in a property value ``:`` and ``,`` also
become ``%3A`` and ``%2C``. A message can therefore never end its line early, so text from
a log cannot start a workflow command of its own.
"""

from __future__ import annotations


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``title=...``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, title: str, message: str) -> str:
    """One annotation line: ``::command title=TITLE::MESSAGE``, both parts escaped."""
    return f"::{command} title={escape_property(title)}::{escape_data(message)}"
