"""``python -m argus.daemon.cli``: the ``argus`` command."""

from argus.daemon.cli import main

main()
