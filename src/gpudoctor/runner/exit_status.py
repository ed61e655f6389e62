"""An exit status as facts: the same ``exit_code``/``exit_signal`` the log readers produce.

``gpudoctor run`` knows the child's real status; ``gpudoctor explain --exit-code/--signal``
takes the one the user saw. Both become the facts the fallback rules (and others) test,
declared by :mod:`gpudoctor.logs.structure.endings` for logs and here for these sources.
"""

from __future__ import annotations

import signal

from gpudoctor.facts.spec import FactSpec

SIGNAL_OFFSET = 128
"""A shell reports a process killed by signal N as exit status 128 + N."""

FACTS: tuple[FactSpec, ...] = (
    FactSpec("exit_code", "int", "-", "exit status",
             "The exit status gpudoctor run saw (128 + N for signal N), or --exit-code."),
    FactSpec("exit_signal", "int", "-", "exit status",
             "The signal that ended the process (gpudoctor run, --signal, or an exit code "
             "above 128)."),
    FactSpec("exit_signal_name", "str", "-", "exit status", "The name of exit_signal."),
    FactSpec("exit_reporter", "str", "-", "exit status",
             "'gpudoctor run' for a wrapped job, 'user' for --exit-code/--signal."),
    FactSpec("process_ended", "bool", "-", "exit status", "The exit status is known."),
)  # fmt: skip


def signal_name(number: int) -> str:
    """``9`` → ``"SIGKILL"``; an unknown number → ``"SIG<n>"``."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def parse_signal(text: str) -> int:
    """``"9"``, ``"KILL"``, ``"sigkill"`` → 9.

    Raises:
        ValueError: not a signal number (1-64) or a known name.
    """
    value = text.strip()
    if value.isdigit():
        number = int(value)
        if 1 <= number <= 64:
            return number
        raise ValueError(f"{text!r} is not a signal number (1-64)")
    name = value.upper()
    name = name if name.startswith("SIG") else f"SIG{name}"
    try:
        return int(signal.Signals[name])
    except KeyError:
        raise ValueError(f"{text!r} is not a signal name such as KILL, SEGV or 9") from None


def exit_facts(
    *, code: int | None = None, signal_number: int | None = None, reporter: str
) -> dict[str, object]:
    """The facts of an exit status.

    ``code`` is a shell-style status (``137``) or a subprocess-style negative one (``-9``);
    above 128 it is read as a signal, as a shell's ``$?`` would be. ``signal_number``, when
    given, wins and sets ``exit_code`` to 128 + N.
    """
    if signal_number is None and code is not None:
        if code < 0:
            signal_number = -code
        elif SIGNAL_OFFSET < code < SIGNAL_OFFSET + 65:
            signal_number = code - SIGNAL_OFFSET
    if signal_number is not None:
        code = SIGNAL_OFFSET + signal_number
    facts: dict[str, object] = {
        "exit_code": code,
        "exit_reporter": reporter,
        "process_ended": True,
    }
    if signal_number is not None:
        facts["exit_signal"] = signal_number
        facts["exit_signal_name"] = signal_name(signal_number)
    return facts
