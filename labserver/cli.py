"""The command line of `python -m labserver [--http [--port N] [--auth]] [--notes DIR] [--page-size N] [--tasks] [--apps]
[--tool-descriptions FILE] [--conformance]`."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import anyio

from labserver.conformance import register_conformance_fixtures
from labserver.http import serve_http
from labserver.legacy_http import serve_legacy_http
from labserver.notes import NoteStore, seed_folder
from labserver.resources import DEFAULT_PAGE_SIZE
from labserver.server import build_server
from labserver.tasks import DEFAULT_TTL_MS
from labserver.stdio_front import serve_stdio


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m labserver", description="The notes lab MCP server.")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", metavar="N", type=int, default=0, help="HTTP port; 0 picks a free one (the default)")
    parser.add_argument(
        "--legacy-only",
        action="store_true",
        help="with --http: serve only the 2025-11-25 handshake era (a legacy server for a dual-era client to probe)",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="with --legacy-only: keep no sessions and ignore the MCP-Protocol-Version header (an older legacy server)",
    )
    parser.add_argument(
        "--auth",
        action="store_true",
        help="with --http: protect the endpoint with OAuth 2.1 (scopes notes:read and notes:write) and start a "
        "local authorization server on a second free port, printed as the second stdout line",
    )
    parser.add_argument(
        "--token-lifetime",
        metavar="S",
        type=positive_int,
        default=600,
        help="with --auth: seconds an access token lives (default 600; refresh tokens renew it)",
    )
    parser.add_argument(
        "--until-stdin-closes",
        action="store_true",
        help="with --http: stop when stdin reaches its end (for a parent that starts the server on a pipe)",
    )
    parser.add_argument(
        "--notes",
        metavar="DIR",
        type=Path,
        default=os.environ.get("NOTES_DIR") or None,
        help="a notes folder to use and keep (seeded with the samples when empty); "
        "default: a fresh temporary copy of the samples, removed at exit",
    )
    parser.add_argument(
        "--tasks",
        action="store_true",
        default=os.environ.get("LAB_TASKS") == "1",
        help="serve the io.modelcontextprotocol/tasks extension (score_night, review_night, tasks/*), keeping "
        "tasks in the notes folder; also on with LAB_TASKS=1",
    )
    parser.add_argument(
        "--task-ttl",
        metavar="MS",
        type=positive_int,
        default=DEFAULT_TTL_MS,
        help=f"with --tasks: milliseconds a task is kept after it is created (its ttlMs; default {DEFAULT_TTL_MS})",
    )
    parser.add_argument(
        "--apps",
        action="store_true",
        default=os.environ.get("LAB_APPS") == "1",
        help="serve the io.modelcontextprotocol/ui extension (MCP Apps: show_hypnogram, app-only epoch_detail, "
        "model-only flag_epoch and their ui:// View); also on with LAB_APPS=1",
    )
    parser.add_argument(
        "--tool-descriptions",
        metavar="FILE",
        type=Path,
        help="a JSON object of tool names and the descriptions the lab gives them in place of its own; the lab "
        "follows the file while it runs (an operator's update) and sends notifications/tools/list_changed to "
        "every listen that asked for toolsListChanged when its tool list changes",
    )
    parser.add_argument(
        "--conformance",
        action="store_true",
        help="for running the official MCP conformance suite against the lab: also serve the suite's fixture "
        "names (tools such as greet, slow_compute, test_image_content and json_schema_2020_12_tool, test:// "
        "resources, test_* prompts), each labelled in its description, over the lab's own machinery (see "
        "labserver.conformance); implies --tasks. No lesson uses it",
    )
    parser.add_argument(
        "--page-size",
        metavar="N",
        type=positive_int,
        default=DEFAULT_PAGE_SIZE,
        help=f"resources/list returns at most N resources per page (default {DEFAULT_PAGE_SIZE})",
    )
    return parser.parse_args(argv)


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def exit_on_sigterm(signum: int, frame: object) -> None:
    # An exception, unlike the default action, lets the finally below remove the temporary folder.
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, exit_on_sigterm)
    temporary = args.notes is None
    folder = Path(tempfile.mkdtemp(prefix="notes-lab-")) if temporary else args.notes
    kind = "a temporary copy of the sample notes, removed at exit" if temporary else "kept"
    print(f"notes-lab: notes folder {folder} ({kind})", file=sys.stderr, flush=True)
    try:
        seed_folder(folder)
        mcp = build_server(NoteStore(folder), args.page_size, tasks=args.tasks or args.conformance,
                           task_ttl_ms=args.task_ttl, apps=args.apps, tool_descriptions=args.tool_descriptions)
        if args.conformance:
            register_conformance_fixtures(mcp)
        if args.http and args.legacy_only:
            serve_legacy_http(mcp, args.port, sessions=not args.stateless, until_stdin_closes=args.until_stdin_closes)
        elif args.http:
            serve_http(mcp, args.port, until_stdin_closes=args.until_stdin_closes,
                       token_lifetime=args.token_lifetime if args.auth else None)
        else:
            anyio.run(serve_stdio, mcp)
    except KeyboardInterrupt:
        pass
    finally:
        if temporary:
            shutil.rmtree(folder, ignore_errors=True)
