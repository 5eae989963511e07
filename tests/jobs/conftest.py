"""The live graph server of the projection tests, for the graph rebuild job."""

from tests.projections.conftest import arcadedb, bolt

__all__ = ["arcadedb", "bolt"]
