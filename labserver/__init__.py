"""The notes lab server: the official MCP SDK behind a spec-faithful stdio front."""
