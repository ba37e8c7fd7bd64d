"""The tap: sit between a real host and a real server, pass every byte through unchanged, record it all.

`python -m mcpwire.tap --out session.jsonl -- <server command...>` on stdio (`stdio.run`),
`python -m mcpwire.tap --http --upstream URL --out session.jsonl` on Streamable HTTP
(`http.serve`). The file is what `Transcript.to_jsonl` writes, plus the time each line
passed (`recording`), so `Transcript.from_jsonl` reads it back.
"""
