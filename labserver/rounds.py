"""Questions asked over MRTR rounds by hand: several at once, answered in part, over more than one round, and only
the ones the client declared it can answer.

SDK 2.3.0's resolvers (`Resolve`) ask one question per resolver, name it `<module>:<function>`, and refuse a
request whose client did not declare what a question needs. This module is what the lab uses when a request
needs more: a `Plan` says which questions to ask given the answers so far, and `gather` runs one round of it.

- Every question the plan asks and the client can answer goes out at once, in one `InputRequiredResult`.
- A retry that answers only some of them gets a new `InputRequiredResult` for the missing ones (the spec's
  "ask again rather than erroring"); an answer of the wrong kind, or a form answer without a required field,
  counts as missing. Keys the round did not ask are ignored, as the spec asks.
- The answers taken so far ride in `requestState`, so a stateless server can ask a second round whose
  questions depend on the first round's answers. The SDK seals that state on the way out and checks it on the
  way back in (`RequestStateBoundary`), exactly as for the resolvers: a tampered state is -32602 before any of
  this code runs.
- A question whose capability the request did not declare is never asked; the plan's caller goes on without
  its answer (the spec: never ask for something the client did not declare).

A request without `requestState` starts at the first round, and an answer to a first-round question is taken
even then: that question depends on nothing, so nothing is lost with the state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequest,
    InputRequiredResult,
    InputResponse,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)
from pydantic import TypeAdapter, ValidationError

FORM = "elicitation.form"
SAMPLING = "sampling"
ROOTS = "roots"
Answers = dict[str, InputResponse]
Plan = Callable[[Answers], "list[Question]"]  # the questions still to ask, given the answers taken so far
ANSWER = TypeAdapter(InputResponse)
JSON_TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda value: isinstance(value, str),
    "boolean": lambda value: isinstance(value, bool),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
}


@dataclass(frozen=True)
class Question:
    """One entry of `inputRequests`: its key, the request, and the client capability it needs."""

    key: str
    request: InputRequest
    needs: str

    def takes(self, answer: InputResponse) -> bool:
        """Whether `answer` answers this question: the right kind, and a form answer with what the form requires."""
        if isinstance(self.request, CreateMessageRequest):
            return isinstance(answer, CreateMessageResult | CreateMessageResultWithTools)
        if isinstance(self.request, ListRootsRequest):
            return isinstance(answer, ListRootsResult)
        if not isinstance(answer, ElicitResult):
            return False
        return answer.action != "accept" or fits_form(answer.content or {}, self.request.params)


def fits_form(content: Mapping[str, Any], params: Any) -> bool:
    """Every required field present, every field given of its schema's type and, with an enum, one of its values."""
    schema = params.requested_schema
    properties = schema.get("properties", {})
    if any(name not in content for name in schema.get("required", [])):
        return False
    for name, value in content.items():
        field = properties.get(name)
        if field is None:
            continue  # a field the form did not ask for is ignored, like an unknown key
        if not JSON_TYPES.get(field.get("type"), lambda _: True)(value) or value not in field.get("enum", [value]):
            return False
    return True


def form_question(key: str, message: str, properties: dict[str, Any], required: list[str]) -> Question:
    schema = {"type": "object", "properties": properties, "required": required}
    return Question(key, ElicitRequest(params=ElicitRequestFormParams(mode="form", message=message,
                                                                      requested_schema=schema)), FORM)


def sampling_question(key: str, text: str, system_prompt: str, max_tokens: int) -> Question:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return Question(key, CreateMessageRequest(params=CreateMessageRequestParams(
        messages=[message], system_prompt=system_prompt, max_tokens=max_tokens)), SAMPLING)


def roots_question(key: str) -> Question:
    return Question(key, ListRootsRequest(), ROOTS)


def declared(capabilities: ClientCapabilities | None) -> frozenset[str]:
    """What this request's client can answer: FORM, SAMPLING, ROOTS (elicitation `{}` means form only)."""
    if capabilities is None:
        return frozenset()
    dumped = capabilities.model_dump(by_alias=True, exclude_none=True)
    elicitation = dumped.get("elicitation")
    can = {SAMPLING} if "sampling" in dumped else set()
    if "roots" in dumped:
        can.add(ROOTS)
    if isinstance(elicitation, dict) and ("form" in elicitation or not elicitation):
        can.add(FORM)
    return frozenset(can)


def answers_in(state: str | None) -> Answers:
    """The answers an earlier round took, from the (already unsealed) requestState."""
    if state is None:
        return {}
    try:
        return {key: ANSWER.validate_python(value) for key, value in json.loads(state)["answers"].items()}
    except (ValueError, KeyError, TypeError, AttributeError, ValidationError):
        # Sealed state from another request never gets here (the SDK binds it to the request); this is a
        # requestState the lab did not write for a question round.
        raise MCPError(code=INVALID_PARAMS, message="requestState does not hold this request's answers") from None


def state_of(answers: Answers) -> str:
    dumped = {key: answer.model_dump(by_alias=True, mode="json", exclude_none=True) for key, answer in answers.items()}
    return json.dumps({"answers": dumped}, separators=(",", ":"))


def gather(plan: Plan, responses: Mapping[str, InputResponse] | None, state: str | None,
           can: frozenset[str]) -> Answers | InputRequiredResult:
    """One round: every answer the plan needs, or an InputRequiredResult asking for what is still missing."""
    answers = answers_in(state)
    asked = [question for question in plan(answers) if question.needs in can and question.key not in answers]
    for question in asked:
        answer = (responses or {}).get(question.key)
        if answer is not None and question.takes(answer):
            answers[question.key] = answer
    missing = [question for question in plan(answers) if question.needs in can and question.key not in answers]
    if not missing:
        return answers
    return InputRequiredResult(input_requests={question.key: question.request for question in missing},
                               request_state=state_of(answers))


def accepted(answers: Answers, key: str) -> dict[str, Any] | None:
    """The content of an accepted form answer; None when the question was not asked, declined or cancelled."""
    answer = answers.get(key)
    return (answer.content or {}) if isinstance(answer, ElicitResult) and answer.action == "accept" else None


def sampled_text(answers: Answers, key: str) -> str | None:
    """The text of a sampled answer (one block or several); None when it was not asked or holds no text."""
    answer = answers.get(key)
    if not isinstance(answer, CreateMessageResult | CreateMessageResultWithTools):
        return None
    blocks = answer.content if isinstance(answer.content, list) else [answer.content]
    text = " ".join(block.text.strip() for block in blocks if isinstance(block, TextContent)).strip()
    return text or None
