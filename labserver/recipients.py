"""Who may receive shared data: the data office's contact form, as a JSON Schema 2020-12 document.

The note `data-sharing-request` is a lab asking for per-participant scores. Before anything is sent, the data
office wants the recipient's name, postal address and one way to reach them, and the way named must be filled
in. That rule is conditional, which is what JSON Schema 2020-12 writes with `if`/`then`/`else`; the address
is a reusable definition (`$defs`, with an `$anchor`); "a phone or an email" is `allOf`/`anyOf`; and no field
outside the form is accepted (`additionalProperties: false`). The schema is written by hand because a Python
signature cannot say any of this, and it is the schema the lab checks arguments against, not only shows.
"""

from __future__ import annotations

from functools import cache
from typing import Any

JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"

RECIPIENT_SCHEMA: dict[str, Any] = {
    "$schema": JSON_SCHEMA_2020_12,
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "description": "A postal address, for the signed data use agreement.",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
    },
    "properties": {
        "name": {"type": "string", "description": "Who receives the data, e.g. 'Dr. Lindqvist'."},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"],
                          "description": "How the data office reaches the recipient; that field must be given."},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

@cache
def recipient_validator() -> Any:
    """The form's Draft 2020-12 validator, built once.

    jsonschema is imported here, not at the top: it takes a noticeable part of a second to import (seconds on
    a loaded machine), and every lab start would pay it, with or without the one tool that uses it. It is
    imported without its IRI grammar (labserver.lean_jsonschema): the form asserts no format.
    """
    from labserver.lean_jsonschema import jsonschema

    return jsonschema().Draft202012Validator(RECIPIENT_SCHEMA)


def recipient_problems(arguments: object) -> list[str]:
    """Every way `arguments` breaks the form, each as 'where: what', in a stable order; [] when it fits."""
    problems = []
    for error in recipient_validator().iter_errors(arguments):
        where = "/".join(str(part) for part in error.absolute_path) or "arguments"
        # An anyOf's own message quotes the whole instance; the branches it tried say what is missing.
        what = ("none of these holds: " + "; ".join(sorted(branch.message for branch in error.context))
                if error.context else error.message)
        problems.append(f"{where}: {what}")
    return sorted(problems)


def contact_line(recipient: dict[str, Any]) -> str:
    """What the data office would write on the parcel, for arguments that fit the form."""
    # The form's `else`: without a contactMethod the email is the one required.
    method = recipient.get("contactMethod", "email")
    address = recipient.get("address") or {}
    where = ", ".join(part for part in (address.get("street"), address.get("city")) if part)
    name = recipient.get("name") or "The recipient"
    return f"{name}: reach by {method} at {recipient[method]}" + (f"; post to {where}" if where else "") + "."
