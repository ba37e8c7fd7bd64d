"""`python -m labserver --http --auth`: the lab as an OAuth 2.1 protected resource, with its own
local authorization server built on the SDK's `mcp.server.auth` pieces.

Everything lives in memory and on loopback: clients, codes and tokens vanish when the process ends.
"""

from labserver.auth.app import AuthLab, build_auth_lab
from labserver.auth.scopes import READ, SCOPES, WRITE, WRITE_TOOLS

__all__ = ["AuthLab", "READ", "SCOPES", "WRITE", "WRITE_TOOLS", "build_auth_lab"]
