"""Merging duplicate nodes and undoing a merge, as events: the requests and calls
(``operations``), the merge's events (``plan``), which value survives (``values``) and the
undoing (``undo``)."""
