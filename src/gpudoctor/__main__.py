"""``python -m gpudoctor``."""

from gpudoctor.cli import run

run()
