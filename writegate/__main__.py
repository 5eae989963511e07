"""``python -m writegate``: the same command as the ``writegate`` script."""

from writegate.cli.main import main

main()
