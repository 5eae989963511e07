"""What agents and people read back: bounded views of the graph with provenance
(``reader``, ``views``), the graph as it stood or as it was true (``past``,
``timeline``), and pictures of it (``pictures``). Nothing here writes."""
