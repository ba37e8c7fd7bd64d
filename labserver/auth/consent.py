"""The consent step: where a pretend user approves or denies a pending authorization request.

No browser is needed: `GET /consent?request=…&user=ada&consent=approve` answers with the
redirect back to the client. Without `consent=` the same URL shows an HTML page with two
buttons, for whoever wants to open it in JupyterLab and click.
"""

from __future__ import annotations

from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from labserver.auth.provider import LabProvider

NO_STORE = {"Cache-Control": "no-store"}


def refusal(description: str) -> Response:
    return JSONResponse({"error": "invalid_request", "error_description": description}, status_code=400,
                        headers=NO_STORE)


def consent_page(request_id: str, client_name: str, scopes: list[str], resource: str | None) -> str:
    items = "".join(f"<li><code>{escape(scope)}</code></li>" for scope in scopes) or "<li>(no scope asked)</li>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Notes lab: consent</title></head>
<body>
<h1>{escape(client_name)} asks for access</h1>
<p>To: <code>{escape(resource or "(no resource named)")}</code></p>
<ul>{items}</ul>
<form method="get" action="consent">
<input type="hidden" name="request" value="{escape(request_id)}">
<label>Signed in as <input name="user" value="ada"></label>
<button name="consent" value="approve">Approve</button>
<button name="consent" value="deny">Deny</button>
</form>
</body></html>
"""


def consent_endpoint(provider: LabProvider):
    async def consent(request: Request) -> Response:
        request_id = request.query_params.get("request", "")
        pending = provider.pending_request(request_id)
        if pending is None:
            return refusal("no pending authorization request with that id (each one can be answered once)")
        answer = request.query_params.get("consent")
        if answer is None:
            name = pending.client.client_name or pending.client.client_id
            return HTMLResponse(consent_page(request_id, name, pending.params.scopes or [], pending.params.resource),
                                headers=NO_STORE)
        user = request.query_params.get("user", "").strip()
        if answer not in ("approve", "deny"):
            return refusal("consent must be 'approve' or 'deny'")
        if answer == "approve" and not user:
            return refusal("approving needs a signed-in user: add user=<name>")
        location = provider.decide(request_id, user, approve=answer == "approve")
        return RedirectResponse(location, status_code=302, headers=NO_STORE)

    return consent
