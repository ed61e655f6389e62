"""The command line: the only layer that prints or exits (see :mod:`gpudoctor.cli.app`).

Each command lives in its own module, imported only when that command runs.
"""

from gpudoctor.cli.app import main, run

__all__ = ["main", "run"]
