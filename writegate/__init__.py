"""writegate: an event-sourced write gate for knowledge graphs that AI agents share.

One installed package. Its parts live in the repository's top-level folders and are
mapped here (``pyproject.toml``'s ``package-dir``): ``writegate.eventlog`` (the log),
``writegate.gate`` (the decision), ``writegate.projections`` (the stores) and
``writegate.cli`` (the command). Importing this package imports none of them, so
``writegate --help`` pays only for what it uses.
"""
