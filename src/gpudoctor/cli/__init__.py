"""The command line: the only layer that prints or exits (see :mod:`gpudoctor.cli.app`).

Each command lives in its own module, registered on the ``main`` group when imported here.
"""

from gpudoctor.cli import explain, machine, rules  # noqa: F401  (registers the commands)
from gpudoctor.cli.app import main, run

__all__ = ["main", "run"]
