"""The auditor's questions, answered from the log and the read model: trails of one node or
relationship (``trail``), summaries by agent, source and method (``auditor``), conflicts
and duplicates (``conflicts``, ``duplicates``), the one-page report (``report``) and the
integrity checks (``integrity``). Nothing here writes."""
