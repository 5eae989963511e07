"""The ``writegate`` command: thin click faces over the Python API of the same names."""
