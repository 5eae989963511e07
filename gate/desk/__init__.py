"""The desk: web pages where auditors trace a fact and reviewers decide held writes.

Mounted at ``/desk`` by ``serve --http`` (sign in with a bearer token) and served alone,
read-only, by ``writegate desk``. Every page is a face over the MCP tools' answers, asked
as the signed-in person (``asks``), rendered by autoescaping templates (``app``,
``routes``, ``pages``; a write shown value by value in ``changes``), each link offered only
to whoever may follow it; signing in, out and a reviewer's decision are the only actions
(``actions``), each behind a session's CSRF token (``sessions``).
"""

from writegate.gate.desk.app import Desk, node_href
from writegate.gate.desk.routes import desk_routes

__all__ = ["Desk", "desk_routes", "node_href"]
