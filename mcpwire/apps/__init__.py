"""The host side of MCP Apps (io.modelcontextprotocol/ui, View<->host protocol 2026-01-26), without a browser.

`host` decides everything a host decides (`AppHost`: the View's lifecycle, what it may call, every frame both
ways), `csp` builds the View's Content-Security-Policy from its resource and says what it lets through, and
`frames` checks the shape of each frame a host posts. The notebook output that draws a View is
`mcpwire.widgets.app_view`.
"""
