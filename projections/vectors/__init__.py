"""Meaning, optionally: vectors of the text index's documents, made off the write path by
a follower and searched by similarity. ``contract`` says what an ``Embedder`` and a
``VectorIndex`` promise; ``embedders`` chooses one by name (entry-point group
``writegate.embedders``); ``wordllama`` is the shipped one, ``minilm`` the stronger
(``writegate[minilm]``, on torch); ``matrix`` is the exact scan; ``rows`` keeps the
``vector_*`` tables on SQLite and PostgreSQL; ``projector`` is the follower; ``settings``
is the ``[embeddings]`` section; ``testing`` holds the test cases.

Only ``settings`` may be imported where embeddings are off: the rest needs numpy, which
``writegate[embeddings]`` installs.
"""
