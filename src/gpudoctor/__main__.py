"""``python -m gpudoctor``."""

from gpudoctor.cli import main

main()
