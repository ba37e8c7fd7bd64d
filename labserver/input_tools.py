"""The lab's other input requests: sampling, roots, URL elicitation, a bare retry, a prompt that asks, and logging.

`summarize_note` and `plan_export` ask through the SDK's declarative resolvers (`Sample`,
`ListRoots`), which name each question `<module>:<function>` like the form questions in
labserver.tools. SDK 2.3.0 checks a sampled answer against its `CreateMessageResult`, which holds
one content block, while the 2026-07-28 schema also allows an array of blocks; `ask_summary`
reads that second form itself (see `sampled_blocks`). The SDK has no resolver for URL-mode elicitation, for a result that carries
only `requestState`, or for prompts, so `publish_note`, `count_words` and the `brief` prompt
build their `InputRequiredResult` by hand and read the answer from `ctx.input_responses`.
Their `requestState` is sealed by the SDK on the way out and checked on the way back in,
exactly like the resolvers' state. `check_notes` logs through `notifications/message`
(a deprecated feature in 2026-07-28 that the SDK still serves per request).
"""

from __future__ import annotations

import json
import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    AudioContent,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ImageContent,
    InputRequiredResult,
    ListRootsResult,
    SamplingMessage,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field

from labserver.notes import Note, NoteError, NoteStore
from labserver.tools import NoteId, existing_note, store_of

APPROVAL_SITE = "https://notes-lab.example/approve"
TEXT_LIKE = (TextContent, ImageContent, AudioContent)  # what SDK 2.3.0's CreateMessageResult takes as one block
WORDS_PER_ROUND_NOTES = 5
SUMMARY_MAX_TOKENS = 120
SHORT_NOTE_WORDS = 70
AUDIENCES = ["newcomers", "reviewers"]


def require_elicitation(ctx: Context, mode: str) -> None:
    """Answer -32021 unless the request declared elicitation in `mode` (a bare `elicitation: {}` means form only)."""
    declared = ctx.client_capabilities
    modes = declared.model_dump(by_alias=True, exclude_none=True).get("elicitation") if declared is not None else None
    if isinstance(modes, dict) and (mode in modes or (mode == "form" and not modes)):
        return
    raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                   message=f"Client did not declare the {mode} elicitation capability this request needs",
                   data={"requiredCapabilities": {"elicitation": {mode: {}}}})


def sampled_blocks(ctx: Context) -> CreateMessageResultWithTools | None:
    """The retry's sampled answer when its `content` is an array of blocks, which the SDK's resolver refuses.

    Only an answer that came with the sealed `requestState` counts (the seal binds it to this call, whose one
    question is the summary), and only from a client that declared `sampling`, as the SDK's own path requires.
    An answer of another kind is refused here, in words, before the SDK's "received a response of the wrong kind".
    """
    answer = (ctx.input_responses or {}).get(SUMMARY_KEY)
    declared = ctx.client_capabilities
    if answer is None or ctx.request_state is None or declared is None or declared.sampling is None:
        return None
    if isinstance(answer, CreateMessageResultWithTools) and isinstance(answer.content, list):
        return answer
    if isinstance(answer, CreateMessageResultWithTools) and not isinstance(answer.content, TEXT_LIKE):
        raise ToolError(f"The sampled answer is a {answer.content.type} block, but this request offered the model "
                        "no tools: answer with text.")
    if not isinstance(answer, (CreateMessageResult, CreateMessageResultWithTools)):
        kind = "a list of roots" if isinstance(answer, ListRootsResult) else "an elicitation answer (an action)"
        raise ToolError(f"The answer under {SUMMARY_KEY} is {kind}, not the sampled message this request asked "
                        "for (a CreateMessageResult: role, content, model).")
    return None


async def ask_summary(note_id: str, ctx: Context) -> Sample | CreateMessageResultWithTools:
    blocks = sampled_blocks(ctx)
    if blocks is not None:
        return blocks  # a resolver may return its value itself; the SDK then skips its one-block check
    note = existing_note(ctx, note_id)
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=f"# {note.title}\n\n{note.body}"))],
        system_prompt="Summarise this lab note in one sentence for a colleague.",
        max_tokens=SUMMARY_MAX_TOKENS,
    )


async def ask_roots() -> ListRoots:
    return ListRoots()


SUMMARY_KEY = f"{ask_summary.__module__}:{ask_summary.__qualname__}"


def file_roots(roots: ListRootsResult) -> list[str]:
    return [str(root.uri) for root in roots.roots if str(root.uri).startswith("file://")]


def export_plan(roots: ListRootsResult, note: Note) -> str:
    """plan_export's answer: where the note would be written, under the client's first file:// root."""
    usable = file_roots(roots)
    if not usable:
        raise ToolError("None of the client's roots is a file:// URI, so there is nowhere to export to.")
    return f"{note.id} would be written to {usable[0].rstrip('/')}/{note.id}.md (usable roots: {len(usable)})."


def words_in(note: Note) -> int:
    return len(note.body.split())


def register_input_tools(mcp: MCPServer, store: NoteStore) -> None:
    """Add summarize_note, plan_export, publish_note, count_words, check_notes and the brief prompt."""

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def summarize_note(
        note_id: NoteId,
        summary: Annotated[CreateMessageResult | CreateMessageResultWithTools, Resolve(ask_summary)],
    ) -> str:
        """Summarise a note in one sentence. Asks the client's model (sampling)."""
        blocks = summary.content if isinstance(summary.content, list) else [summary.content]
        text = " ".join(block.text.strip() for block in blocks if isinstance(block, TextContent)).strip()
        if not text:
            raise ToolError("The model's answer had no text to use as a summary.")
        return f"Summary of {note_id} (by {summary.model}): {text}"

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def plan_export(
        note_id: NoteId,
        roots: Annotated[ListRootsResult, Resolve(ask_roots)],
        ctx: Context,
    ) -> str:
        """Say where a note would be exported. Asks the client for its roots first; writes nothing."""
        return export_plan(roots, existing_note(ctx, note_id))

    # readOnlyHint is wrong here on purpose: publishing changes the world outside the server. Lesson 14 uses
    # this tool as its example of an annotation a host must not trust (lesson 13's host would skip consent on it).
    # Leave it wrong: outputs of many lessons show this definition.
    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
    async def publish_note(note_id: NoteId, ctx: Context) -> str | InputRequiredResult:
        """Publish a note on the lab's public page. The lab head approves on a web page first."""
        note = existing_note(ctx, note_id)
        answer = (ctx.input_responses or {}).get("approval")
        if ctx.request_state is None or answer is None:
            require_elicitation(ctx, "url")
            question = ElicitRequest(params=ElicitRequestURLParams(
                mode="url", url=f"{APPROVAL_SITE}/{note.id}",
                message=f"The lab head must approve publishing '{note.title}'. Open the approval page?"))
            return InputRequiredResult(input_requests={"approval": question},
                                       request_state=json.dumps({"approval": note.id}))
        action = getattr(answer, "action", None)
        if action != "accept":
            return f"Not published: the user did not open the approval page ({action or 'no answer'})."
        # The lab has no approval site: it takes the user's consent as the lab head's approval.
        return f"Published {note.id} at https://notes-lab.example/public/{note.id}."

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def count_words(ctx: Context) -> str | InputRequiredResult:
        """Count the words in all notes, five notes per round; call again with the requestState until done."""
        progress = json.loads(ctx.request_state) if ctx.request_state else {"done": 0, "words": 0}
        ids = store_of(ctx).ids()
        batch = ids[progress["done"]: progress["done"] + WORDS_PER_ROUND_NOTES]
        for note_id in batch:
            try:
                progress["words"] += words_in(store.get(note_id))
            except NoteError:
                continue  # deleted between rounds
        progress["done"] += len(batch)
        if progress["done"] < len(ids):
            return InputRequiredResult(request_state=json.dumps(progress))
        return f"{progress['words']} words in {progress['done']} notes."

    @mcp.prompt()
    async def brief(
        note_id: Annotated[str, Field(description="The id of the note to brief someone on.")],
        ctx: Context,
    ) -> str | InputRequiredResult:
        """A prompt that briefs someone on a note. Asks the user who the brief is for."""
        try:
            note = store.get(note_id)
        except NoteError as error:
            raise MCPError(code=-32602, message=str(error)) from None
        answer = (ctx.input_responses or {}).get("audience")
        content = getattr(answer, "content", None) or {}
        if ctx.request_state is None or getattr(answer, "action", None) != "accept" or content.get("audience") not in AUDIENCES:
            require_elicitation(ctx, "form")
            question = ElicitRequest(params=ElicitRequestFormParams(
                mode="form", message=f"Who is the brief on '{note.title}' for?",
                requested_schema={"type": "object", "required": ["audience"],
                                  "properties": {"audience": {"type": "string", "enum": AUDIENCES}}}))
            return InputRequiredResult(input_requests={"audience": question},
                                       request_state=json.dumps({"asked": "audience", "note": note.id}))
        return f"Brief {content['audience']} on this lab note, in three sentences.\n\n# {note.title}\n\n{note.body}"

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def check_notes(ctx: Context) -> str:
        """Check every note for too few tags and very short text. Logs what it finds if asked to."""
        problems = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ctx.log is deprecated with the feature; the lab teaches it anyway
            for note in store.all():
                await ctx.log("debug", f"checked {note.id}", logger_name="check_notes")
                if len(note.tags) < 2:
                    problems += 1
                    await ctx.log("warning", f"{note.id} has only {len(note.tags)} tag",
                                  logger_name="check_notes")
                if words_in(note) < SHORT_NOTE_WORDS:
                    problems += 1
                    await ctx.log("notice", f"{note.id} has only {words_in(note)} words", logger_name="check_notes")
            await ctx.log("info", {"notes": len(store.ids()), "problems": problems}, logger_name="check_notes")
        return f"Checked {len(store.ids())} notes: {problems} problems."
