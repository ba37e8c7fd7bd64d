"""Check for exercise 09, Task 1: answer a sampling, a roots and a URL-mode question by hand.

The check sends each first leg itself, hands the learner's function the question, sends the
retry with the learner's answer under the server's key, and explains what the server did with it.
"""

import copy

from mcpwire import frames
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, stdio_lab
from .verdict import failed, not_done, passed, server_said, short

SUMMARY = "Spindle density (12–15 Hz) predicts overnight recall in our pilot data."  # non-ASCII on purpose
FOLDER = "file:///lab/exports/"

# story, tool, capability, what the final text must contain
CASES = [
    ("summarize_note on spindle-density asks your model (sampling/createMessage)", "summarize_note",
     {"sampling": {}}, SUMMARY),
    ("plan_export on spindle-density asks for the folders the user opened (roots/list)", "plan_export",
     {"roots": {}}, f"{FOLDER}spindle-density.md"),
    ("publish_note on spindle-density asks the user to open an approval page (URL-mode elicitation)",
     "publish_note", {"elicitation": {"url": {}}}, "Published spindle-density"),
]


def _send(wire, frame):
    reply = wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
    return None if reply is None else reply.message


def check_input_answers(answer_input_request, lab=None):
    """answer_input_request(question, summary, folder) must return the answer to one input request."""
    if missing(answer_input_request):
        not_done("define answer_input_request(question, summary, folder) first.")
        return
    with stdio_lab(lab) as wire:
        for number, (story, tool, capability, expected) in enumerate(CASES, start=1):
            meta = {frames.CLIENT_CAPABILITIES_KEY: capability}
            params = {"name": tool, "arguments": {"note_id": "spindle-density"}}
            first = _send(wire, frames.request("tools/call", params, id=f"ask-{number}", meta=meta))
            result = first.get("result") if isinstance(first, dict) else None
            if not (isinstance(result, dict) and result.get("resultType") == "input_required"):
                failed(f"The check's own first leg ({story}) did not get an input_required result.",
                       server=server_said(first) if first is not None else "nothing",
                       hint="Restart the kernel and run the notebook from the top.")
                return
            (key, question), = result["inputRequests"].items()
            outcome = attempt(answer_input_request, copy.deepcopy(question), SUMMARY, FOLDER)
            if outcome.not_done:
                not_done("answer_input_request still raises NotImplementedError. Look at question[\"method\"] and "
                         "return the answer that kind of request needs.")
                return
            told = f"The check called {tool} ({story}) and gave your function its question."
            if outcome.error:
                failed(f"{told} Your function raised {outcome.error_text}",
                       hint="question is {\"method\": ..., \"params\": ...}; a roots/list question has no params.")
                return
            answer = outcome.value
            if not isinstance(answer, dict):
                failed(f"{told} Your function returned {short(answer)}; return the answer as a dict.",
                       hint="Even a list of roots is wrapped in an object: {\"roots\": [...]}."
                       if isinstance(answer, list) else None)
                return
            retry = frames.request("tools/call", {**params, "inputResponses": {key: answer},
                                                  "requestState": result["requestState"]},
                                   id=f"answer-{number}", meta=meta)
            try:
                frames.dumps(retry)
            except (TypeError, ValueError) as error:
                failed(f"{told} Your answer cannot be written as JSON ({error}).",
                       hint="Use only dicts, lists, strings, numbers, booleans and None.")
                return
            reply = _send(wire, retry)
            problem = _what_is_wrong(question, answer, reply, expected)
            if problem is not None:
                what, hint = problem
                failed(f"{told} {what}", server=server_said(reply) if reply is not None else "nothing", hint=hint)
                return
    passed("You played the model, the host and the user: your CreateMessageResult became the summary, your roots "
           "list gave the export folder, and your bare accept let the approval go ahead.")


def _what_is_wrong(question, answer, reply, expected):
    method = question["method"]
    if method == "sampling/createMessage":
        return _sampling_problem(answer, reply, expected)
    if method == "roots/list":
        return _roots_problem(answer, reply, expected)
    return _url_problem(answer, reply, expected)


def _final_text(reply):
    result = reply.get("result") if isinstance(reply, dict) else None
    if not isinstance(result, dict):
        return None
    return " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))


def _sampling_problem(answer, reply, expected):
    if "action" in answer:
        return ("You answered the sampling request with an ElicitResult (an action), but it asked for a model's "
                "message.", "A sampling answer is a CreateMessageResult: role, content, model.")
    missing_fields = [field for field in ("role", "content", "model") if field not in answer]
    if missing_fields:
        return (f"Your CreateMessageResult has no {', '.join(missing_fields)}: {short(answer)}.",
                "role, content and model are all required; stopReason is optional.")
    if not isinstance(answer["model"], str):
        return (f"Your CreateMessageResult has model {short(answer['model'])}: model is a string, the name of the "
                "model that wrote the message.",
                "Name the model that answered, a string such as \"by-hand\" (here the model is you).")
    if answer["role"] != "assistant":
        return (f"Your message has role {_shown(answer['role'])}. The server accepted it, but the model's answer is "
                "the assistant speaking.", "Which side of a chat writes the reply to a user message?")
    content = answer["content"]
    blocks = content if isinstance(content, list) else [content]
    # The 2026-07-28 schema takes one block or an array of blocks; the lab reads both (SDK 2.3.0 alone takes one).
    not_a_block = next((block for block in blocks if not (isinstance(block, dict) and "type" in block)), None)
    if not_a_block is not None:
        where = f"Your content array holds {short(not_a_block)}" if isinstance(content, list) else \
            f"Your content is {short(content)}"
        return (f"{where}, which is not a content block.",
                "A content block is an object with a type, like the content of the question's message: "
                "{\"type\": \"text\", \"text\": ...}. content is one block, or an array of blocks.")
    if not any(block.get("type") == "text" for block in blocks):
        return (f"Your content {short(content)} has no text block, so there is no summary to read.",
                "A summary is text: a block {\"type\": \"text\", \"text\": ...}.")
    text = _final_text(reply)
    if text is None or expected not in text:
        return (f"The tool did not finish with your summary ({expected!r}).",
                "Put the summary, unchanged, in the text of the content block.")
    return None


def _roots_problem(answer, reply, expected):
    roots = answer.get("roots")
    if not isinstance(roots, list):
        return (f"Your answer {short(answer)} has no list under \"roots\".",
                "A ListRootsResult is an object whose roots is a list of roots.")
    uris = [root.get("uri") if isinstance(root, dict) else root for root in roots]
    if any(not isinstance(root, dict) for root in roots):
        return (f"Your roots are {short(roots)}: each root must be an object.",
                "Each root is an object with a uri (and, if you like, a name).")
    without_uri = next((root for root in roots if "uri" not in root), None)
    if without_uri is not None:
        return (f"Your root {short(without_uri)} has no uri: the folder goes under the key \"uri\", as a file:// "
                "URI.", "A Root is {\"uri\": ..., \"name\": ...} (name optional): no other key carries the folder.")
    if any(not (isinstance(uri, str) and uri.startswith("file://")) for uri in uris):
        return (f"Your roots have the URIs {short(uris)}; each must be a file:// URI.",
                "Use the folder you were given exactly as it is, scheme included.")
    if uris != [FOLDER] and [uri.rstrip("/") for uri in uris] == [FOLDER.rstrip("/")]:
        return (f"Your root is {short(uris[0])}, the folder with {'no' if len(uris[0]) < len(FOLDER) else 'an extra'} "
                f"trailing slash; the user opened {FOLDER}.",
                "Use the folder you were given exactly as it is: a server joins a root and a file name, so the "
                "trailing slash matters.")
    if uris != [FOLDER]:
        return (f"Your roots name {short(uris)}, but the user opened only {FOLDER}.",
                "A host lists the folders the user opened, no more and no others.")
    text = _final_text(reply)
    if text is None or expected not in text:
        return ("The tool did not plan the export into the folder you gave.", "Compare your answer with the lesson's.")
    return None


def _url_problem(answer, reply, expected):
    action = answer.get("action")
    if action != "accept":
        return (f"Your answer has action {_shown(action)}; the user agreed to open the page.",
                "The three actions are accept, decline and cancel.")
    if "content" in answer:
        return (f"Your accept carries content {short(answer['content'])}. The server ignored it, but in URL mode the "
                "client never has the user's input: it went to the web page.",
                "A URL-mode answer is the action alone.")
    text = _final_text(reply)
    if text is None or expected not in text:
        return ("The note was not published.", "Answer under the key the server asked, with the action alone.")
    return None


def _shown(value):
    """A string in quotes, anything else as compact JSON: the way a learner wrote it."""
    return repr(value) if isinstance(value, str) else short(value)
