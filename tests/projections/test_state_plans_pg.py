"""A write's lookups of the state read model on PostgreSQL stay probes of their keys as the
tables grow.

A statement is prepared once a connection has run it a few times, and the server then keeps
the plan it made for it — made while the tables were still small, where reading a whole
table costs no more than an index — until the table is next analysed (autovacuum, within
minutes). The write's reads of the rows it names and its delete of the supports it
replaces must not be plans that read the table, or each write costs what the table holds.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import SEED_SCHEMA
from writegate.eventlog import Actor
from writegate.gate import Gate

CLAIM: Any = {"source": "hr.csv", "extraction_method": "parsed", "reliability": 0.9}
WATCHED = ("state_nodes", "state_aliases", "state_support")


def person(name: str) -> dict[str, Any]:
    return {"label": "Person", "merge_keys": {"name": name}, "properties": {"age": 4}, **CLAIM}


def test_the_lookups_prepared_while_the_tables_were_small_do_not_scan_them(pg_dsn: str) -> None:
    with Gate.open(pg_dsn, default_actor=Actor(agent="alice")) as gate:
        gate.publish_schema(SEED_SCHEMA)
        for n in range(12):  # prepared and planned while the tables hold a few rows
            assert gate.write_node(**person(f"early {n}")).status == "written"
        for batch in range(15):  # then they grow (not analysed: autovacuum waits a minute)
            items = [{"op": "write_node", **person(f"b{batch}-{n}")} for n in range(100)]
            assert gate.write_batch(items=items).status == "written"
        for n in range(3):
            assert gate.write_node(**person(f"late {n}")).status == "written"
        plans = []
        with gate.log.snapshot() as conn:  # one of the connections that wrote
            prepared = conn.execute(
                "SELECT name, statement, cardinality(parameter_types) FROM pg_prepared_statements"
            ).fetchall()
            for name, statement, count in prepared:
                if any(table in statement for table in WATCHED):
                    nulls = ", ".join(["NULL"] * count)
                    rows = conn.execute(f"EXPLAIN EXECUTE {name}({nulls})").fetchall()
                    plans.append((statement, "\n".join(str(row[0]) for row in rows)))
    assert any("FROM state_nodes" in statement for statement, _ in plans)
    assert any("DELETE FROM state_support" in statement for statement, _ in plans)
    scans = [
        (statement[:80], table)
        for statement, plan in plans
        for table in WATCHED
        if f"Seq Scan on {table}" in plan
    ]
    assert scans == []
