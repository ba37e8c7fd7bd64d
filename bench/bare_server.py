"""The lab's tools on the bare SDK transports, for comparison: `python -m bench.bare_server [--http PORT]`.

Same MCPServer as the lab server (same tools, same notes), but served by
`MCPServer.run("stdio")` / `run("streamable-http")` without the lab's stdio front.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from labserver.notes import NoteStore, seed_folder
from labserver.server import build_server


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bare-notes-") as folder:
        seed_folder(Path(folder))
        mcp = build_server(NoteStore(Path(folder)))
        if sys.argv[1:2] == ["--http"]:
            mcp.settings.log_level = "WARNING"
            mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=False)
        else:
            mcp.run("stdio")


if __name__ == "__main__":
    main()
