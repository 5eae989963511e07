"""The live graph server of the projection tests, for the graph rebuild job."""

from tests.projections.conftest import arcadedb, arcadedb_root, bolt

__all__ = ["arcadedb", "arcadedb_root", "bolt"]
