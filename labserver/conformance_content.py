"""The conformance suite's tool fixtures for content blocks, progress, tool errors and JSON Schema 2020-12.

On only with `python -m labserver --conformance` (through labserver.conformance's registration point). The
suite's scenarios tools-call-* and json-schema-2020-12 call tools of its reference server by name
(`test_image_content`, `test_tool_with_progress`, ...). Each name here is an alias over what the lab already
does (the hypnogram attachment, night_report's four blocks, reindex's progress, sync_notes's tool error,
the note index), or over lab machinery built for what the lab did not have: an audio block (a sample TMR cue,
labserver.cue_sound) and a tool whose inputSchema is hand-written JSON Schema 2020-12 (the data office's
recipient form, labserver.recipients).

An alias calls the lab's own tool or resource through the server (`mcp.call_tool`, `mcp.read_resource`) with
the fixture call's own context, so a progress token, a tool error or a changed note folder reach the suite
exactly as they reach a client of the lab tool.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import model_validator

from labserver.cue_sound import WAV_MIME_TYPE, describe_cue, tmr_cue_wav
from labserver.recipients import RECIPIENT_SCHEMA, contact_line, recipient_problems, recipient_validator
from labserver.resources import HYPNOGRAM_URI, INDEX_URI
from labserver.tools import READS, hints

SCORING_NOTE_URI = "notes://hypnogram-scoring"  # the note night_report embeds
UNREACHABLE_REMOTE = "origin"  # any remote: sync_notes has no network access and always says so
SCHEMA_TOOL = "json_schema_2020_12_tool"


def fixture(kind: str) -> str:
    """The first words of every fixture's description (labserver.conformance's, for a tool)."""
    return f"Conformance-suite fixture name (served only with --conformance), not a lab {kind}. "


async def read_lab_resource(mcp: MCPServer, uri: str) -> ReadResourceContents:
    """The one contents item of a lab resource, read as resources/read reads it."""
    [contents] = await mcp.read_resource(uri)
    return contents


def embedded(uri: str, contents: ReadResourceContents) -> EmbeddedResource:
    """A resource as a content block: text as text, bytes as base64 (as resources/read sends them)."""
    if isinstance(contents.content, bytes):
        resource = BlobResourceContents(uri=uri, blob=base64.b64encode(contents.content).decode(),
                                        mime_type=contents.mime_type or "application/octet-stream")
    else:
        resource = TextResourceContents(uri=uri, text=contents.content, mime_type=contents.mime_type or "text/plain")
    return EmbeddedResource(type="resource", resource=resource)


async def hypnogram_image(mcp: MCPServer) -> ImageContent:
    """The hypnogram attachment as an image block, the one night_report sends."""
    png = await read_lab_resource(mcp, HYPNOGRAM_URI)
    return ImageContent(type="image", data=base64.b64encode(png.content).decode(), mime_type=png.mime_type)


class WholeArguments(ArgModelBase):
    """Hands the tool the arguments object as sent.

    The SDK builds a tool's argument model from its Python signature and drops names the model lacks. The
    recipient form is hand-written JSON Schema 2020-12 (conditions, a closed set of fields) that no signature
    can state, so the lab checks the whole object against the schema it lists instead.
    """

    arguments: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def take_everything(cls, data: Any) -> dict[str, Any]:
        return {"arguments": data}


def register_content_fixtures(mcp: MCPServer) -> None:
    """Add the tools-call-* and json-schema-2020-12 fixture tools."""

    @mcp.tool(name="test_simple_text", annotations=hints("Simple text (conformance fixture)", **READS),
              description=fixture("tool") + f"Returns the lab's note index ({INDEX_URI}) as one text block.")
    async def simple_text() -> CallToolResult:
        index = await read_lab_resource(mcp, INDEX_URI)
        return CallToolResult(content=[TextContent(type="text", text=index.content)])

    @mcp.tool(name="test_image_content", annotations=hints("Image content (conformance fixture)", **READS),
              description=fixture("tool") + f"Returns the hypnogram attachment ({HYPNOGRAM_URI}) as an image block, "
              "the one night_report sends.")
    async def image_content() -> CallToolResult:
        return CallToolResult(content=[await hypnogram_image(mcp)])

    @mcp.tool(name="test_audio_content", annotations=hints("Audio content (conformance fixture)", **READS),
              description=fixture("tool") + "Returns a sample TMR cue (the short sound the lab's targeted-memory-"
              "reactivation pilot replays during sleep) as a WAV audio block, with a text block describing it.")
    async def audio_content() -> CallToolResult:
        return CallToolResult(content=[
            TextContent(type="text", text=describe_cue()),
            AudioContent(type="audio", data=base64.b64encode(tmr_cue_wav()).decode(), mime_type=WAV_MIME_TYPE),
        ])

    @mcp.tool(name="test_embedded_resource", annotations=hints("Embedded resource (conformance fixture)", **READS),
              description=fixture("tool") + f"Returns the note {SCORING_NOTE_URI} as an embedded resource block, "
              "as night_report embeds it.")
    async def embedded_resource() -> CallToolResult:
        return CallToolResult(content=[embedded(SCORING_NOTE_URI, await read_lab_resource(mcp, SCORING_NOTE_URI))])

    @mcp.tool(name="test_multiple_content_types", annotations=hints("Mixed content (conformance fixture)", **READS),
              description=fixture("tool") + "Calls night_report: text, image, resource link and embedded resource.")
    async def multiple_content_types(ctx: Context) -> CallToolResult:
        return await mcp.call_tool("night_report", {}, ctx)

    @mcp.tool(name="test_tool_with_progress", annotations=hints("Progress (conformance fixture)", **READS),
              description=fixture("tool") + "Calls reindex with its default pause: one progress notification per "
              "note when the request carries a progressToken.")
    async def tool_with_progress(ctx: Context) -> CallToolResult:
        return await mcp.call_tool("reindex", {}, ctx)

    @mcp.tool(name="test_error_handling",
              annotations=hints("Tool error (conformance fixture)", read_only=False, destructive=True, idempotent=False,
                                open_world=True),
              description=fixture("tool") + f"Calls sync_notes with the remote {UNREACHABLE_REMOTE!r}; the lab has no "
              "network access, so the result is sync_notes's tool error (isError).")
    async def error_handling(ctx: Context) -> CallToolResult:
        try:
            return await mcp.call_tool("sync_notes", {"remote": UNREACHABLE_REMOTE}, ctx)
        except ToolError as error:
            # The SDK's own answer to a tool that raised ToolError, as a call to sync_notes gets it.
            return CallToolResult(content=[TextContent(type="text", text=str(error))], is_error=True)

    async def check_recipient(arguments: dict[str, Any]) -> CallToolResult:
        problems = recipient_problems(arguments)
        if problems:
            raise ToolError("The recipient does not fit the data office's form: " + "; ".join(problems))
        return CallToolResult(content=[TextContent(type="text", text=contact_line(arguments))])

    # The private _tool_manager is where the SDK keeps the Tool it built from the signature (the lab already
    # reaches the SDK's _lowlevel_server the same way); its schema and argument model are read on each call.
    tool = mcp._tool_manager.add_tool(
        check_recipient, name=SCHEMA_TOOL, annotations=hints("Check a data recipient (conformance fixture)", **READS),
        description=fixture("tool") + "Checks a data recipient's contact details against the data office's form "
        "(JSON Schema 2020-12: $defs with an $anchor, allOf/anyOf, if/then/else, additionalProperties false) and "
        "answers with the contact line, or a tool error naming every field that breaks the form.")
    tool.parameters = copy.deepcopy(RECIPIENT_SCHEMA)
    tool.fn_metadata.arg_model = WholeArguments
    recipient_validator()  # built at start, so that a first call does not wait for jsonschema's import
