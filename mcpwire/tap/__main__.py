"""`python -m mcpwire.tap --out session.jsonl -- <server command...>`: record a real host's traffic.

Put the tap where the host expects the server's command; the host talks to the server
through it unchanged, and every frame lands in `session.jsonl` (load it with
`Transcript.from_jsonl`). `--http --upstream URL` taps a Streamable HTTP server instead.
"""

import argparse
import os
import signal
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m mcpwire.tap", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the JSONL file to write (one exchange per line)")
    parser.add_argument("--stderr-out", help="where the server's stderr is kept (default: OUT with .stderr)")
    parser.add_argument("--http", action="store_true", help="tap a Streamable HTTP server (needs --upstream)")
    parser.add_argument("--upstream", help="the server's URL, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the server's command and arguments")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.http:
        if not args.upstream:
            parser.error("--http needs --upstream URL")
        from .http import serve
        return serve(args.upstream, args.out, port=args.port)
    if not command:
        parser.error("give the server's command after --")
    from .stdio import run
    code = run(command, args.out, args.stderr_out or os.path.splitext(args.out)[0] + ".stderr")
    if code < 0:  # the server died of a signal: so does the tap, and the host sees the same
        sys.stdout.flush()
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main())
