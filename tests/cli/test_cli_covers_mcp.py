"""Whatever an agent can ask of an MCP tool, an operator can ask of the CLI: every argument
of every built-in tool's published input schema has a spelling on the command doing the same
work. Where the spelling differs from the argument's name, ``SPELLED`` says how, in one
table; an argument added to a tool without a CLI spelling fails here.

(Per-label tools, ``add_<label>`` and friends, are the generic write tools with the label
fixed: their CLI is ``write node``/``write relationship``/``delete node``.)
"""

from __future__ import annotations

import click
import pytest

from writegate.cli.main import load_command
from writegate.gate.server.catalog import BUILTIN_TOOLS
from writegate.gate.server.tools import ToolSpec

NODE_WORD = "node"  # label and merge keys in one word (cli.nodes)
BY_SUBCOMMAND = "the subcommand"  # an enum argument spelled as the command's name

# tool -> the command doing its work (None: a tool with nothing the CLI needs, said why)
COMMANDS: dict[str, tuple[str, ...] | None] = {
    "write_node": ("write", "node"),
    "write_relationship": ("write", "relationship"),
    "delete_node": ("delete", "node"),
    "delete_relationship": ("delete", "relationship"),
    "write_batch": ("write", "batch"),
    "record_observation": ("observe",),
    "search_observations": ("search",),  # with --observations
    "open_observation": ("show", "observation"),
    "refresh_schema_cache": None,  # each command reads the schema afresh: no cache to refresh
    "get_schema": ("schema", "show"),
    "open_nodes": ("open",),
    "search_nodes": ("search",),
    "graph_query": ("query",),
    "neighbors": ("neighbors",),
    "find_path": ("path",),
    "node_history": ("log",),
    "audit_events": ("log",),
    "integrity_report": ("verify",),
    "audit_conflicts": ("audit", "conflicts"),
    "audit_duplicates": ("audit", "duplicates"),
    "report": ("report",),
    "review_queue": ("review", "list"),
    "review_decide": ("review", "approve"),
    "merge_nodes": ("merge",),
    "unmerge_nodes": ("unmerge",),
    "job_start": ("rebuild",),
    "job_status": ("jobs", "show"),
    "job_cancel": ("jobs", "cancel"),
    "job_list": ("jobs", "list"),
    "graph_improve": ("improve",),
    "audit_feedback": ("audit", "feedback"),
    "export_subject": ("export", "subject"),
    "forget_subject": ("forget",),
    "retract_source": ("retract",),
    "unretract_source": ("unretract",),
}

# (tool, argument) -> the click parameter spelling it, where the names differ
SPELLED: dict[tuple[str, str], str] = {
    **{
        (tool, argument): parameter
        for tool in ("write_node", "delete_node")
        for argument, parameter in (("label", "node"), ("merge_keys", "node"))
    },
    **{
        (tool, argument): parameter
        for tool in ("write_relationship", "delete_relationship")
        for argument, parameter in (
            ("type", "rtype"),
            ("from_label", "start"),
            ("from_keys", "start"),
            ("to_label", "end"),
            ("to_keys", "end"),
        )
    },
    ("write_node", "properties"): "props",
    ("write_relationship", "properties"): "props",
    ("write_relationship", "endpoint_policy"): "merge_endpoints",
    ("write_batch", "items"): "path",  # a file of them
    ("search_nodes", "query"): "text",
    ("search_observations", "query"): "text",
    ("graph_query", "query"): "text",
    ("graph_query", "topK"): "top_k",
    ("graph_query", "neighborhoodDepth"): "depth",
    ("graph_query", "relationshipFilter"): "rtype",
    ("graph_query", "asOf"): "as_of",
    ("graph_query", "validAt"): "valid_at",
    ("neighbors", "relationship_type"): "rtype",
    ("find_path", "from"): "start",
    ("find_path", "to"): "end",
    ("find_path", "relationship_type"): "rtype",
    ("node_history", "cursor"): "after_seq",  # the cursor is the seq to continue after
    ("audit_events", "cursor"): "after_seq",
    ("review_decide", "decision"): BY_SUBCOMMAND,
    ("merge_nodes", "label"): "nodes",  # SURVIVOR DUPLICATE, each a node word
    ("merge_nodes", "survivor_keys"): "nodes",
    ("merge_nodes", "duplicate_keys"): "nodes",
    ("merge_nodes", "duplicate_label"): "nodes",
    ("unmerge_nodes", "merge"): "merge_id",
    (
        "job_start",
        "kind",
    ): BY_SUBCOMMAND,  # writegate rebuild | replay | backup | copy | import | retain
    ("job_start", "target"): "name",
    ("job_start", "options"): "options",  # each option of the kind's command: OPTIONS
    ("job_status", "job"): "job_id",
    ("job_cancel", "job"): "job_id",
    ("graph_improve", "sessionId"): "session",
    ("graph_improve", "answerId"): "answer",
    ("graph_improve", "usedNodeIds"): "nodes",
    ("graph_improve", "usedEdgeKeys"): "edges",
    ("audit_feedback", "identity"): "node",  # or --edge TYPE FROM TO
    ("audit_feedback", "after"): "after_seq",
    ("forget_subject", "label"): "node",  # LABEL KEY=VALUE...
    ("forget_subject", "keys"): "node",
    ("retract_source", "confirm"): "dry_run",  # the report until confirmed; --dry-run: it alone
    ("unretract_source", "retraction"): "retraction",
}
JOBS = {  # each kind of job: its command, and its target's spelling there (import: the log)
    "rebuild": (("rebuild",), "name"),
    "replay": (("replay",), "name"),
    "backup": (("backup",), "dest"),
    "copy": (("copy",), "dest"),
    "import": (("import", "mcp-memory"), None),  # its format is the subcommand
    "retain": (("retain",), None),  # its target is the log
    "optimize": (("optimize",), None),  # its target is the log
}
OPTIONS = {
    "rebuild": ("regate",),
    "replay": ("from_seq", "to_seq", "as_of"),
    "backup": ("tokens",),
    "copy": ("batch",),
    "import": ("path", "method", "source", "reliability"),
}


def command(words: tuple[str, ...]) -> click.Command:
    found = load_command(words[0])
    for word in words[1:]:
        assert isinstance(found, click.Group), words
        found = found.commands[word]
    return found


def parameters(words: tuple[str, ...]) -> set[str]:
    return {p.name for p in command(words).params if p.name}


def test_every_tool_is_in_the_table() -> None:
    assert sorted(COMMANDS) == sorted(tool.name for tool in BUILTIN_TOOLS)


@pytest.mark.parametrize("tool", BUILTIN_TOOLS, ids=lambda tool: tool.name)
def test_every_tool_argument_has_a_cli_spelling(tool: ToolSpec) -> None:
    words = COMMANDS[tool.name]
    arguments = list(tool.input_schema().get("properties", {}))
    if words is None:
        assert arguments == [], f"{tool.name} takes arguments: name the command taking them"
        return
    taken = parameters(words)
    missing = []
    for argument in arguments:
        spelled = SPELLED.get((tool.name, argument), argument)
        if spelled == BY_SUBCOMMAND and tool.name == "job_start":
            choices = tool.input_schema()["properties"][argument]["enum"]
            assert sorted(choices) == sorted(JOBS)
            assert all(t is None or t in parameters(words) for words, t in JOBS.values())
        elif spelled == BY_SUBCOMMAND:
            choices = tool.input_schema()["properties"][argument]["enum"]
            siblings = [(*words[:-1], choice) for choice in choices]  # review approve|reject
            assert all(parameters(s) >= taken & {"proposal", "note", "name"} for s in siblings)
        elif spelled == "options":
            assert all(set(keys) <= parameters(JOBS[kind][0]) for kind, keys in OPTIONS.items())
        elif spelled not in taken:
            missing.append(f"{argument} (as {spelled})")
    assert missing == [], f"writegate {' '.join(words)} has no spelling for {missing}"
