"""The gate's version, stamped on every event as ``write_gate_version``."""

from importlib.metadata import version

__version__: str = version("writegate")
