"""mcpwire: a small raw-wire MCP toolkit for the lessons."""
