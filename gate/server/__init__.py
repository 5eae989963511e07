"""The gate's MCP surface: typed tools, per-type tools, Cedar policy, bearer tokens, transports."""
