"""Checks for exercise 15: refuse path traversal in note ids.

The check judges the learner's validator on attacks and valid ids; for a wrong verdict
it shows what the lab server's own validator answers to the same id.
"""

import unicodedata

from .attempt import attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, server_said, shown

ATTACKS = [
    ("../secret", "climbs out of the notes folder"),
    ("..", "names the parent folder"),
    ("/etc/passwd", "is an absolute path"),
    ("~/welcome", "is a home-folder path"),
    ("..%2Fsecret", "hides the slash as %2F"),
    ("%2e%2e%2fsecret", "hides dots and slash as %2e%2e%2f"),
    ("..\\secret", "uses the Windows separator"),
    ("notes/../welcome", "goes out and comes back"),
    ("welcome\x00.png", "holds a NUL, where C code stops reading"),
    ("welcome\n", "ends in a newline, which re.match with $ lets through, and so does a strip() before the test"),
    (" welcome", "starts with a space"),
    ("Welcome", "is an uppercase alias: the same file on a case-insensitive disk"),
    ("spindle-Density", "has an uppercase letter inside, an alias on a case-insensitive disk"),
    ("notes/welcome", "has a slash between two words: a path into a folder"),
    ("spindle density", "has a space between two words"),
    ("w\u0435lcome", "has a Cyrillic е that looks like an e"),
    ("welcome.md", "is a file name, not an id"),
    ("welc%6Fme", "is percent-encoded: the server uses it as it arrives, so decoding it first judges another id"),
    ("%252e%252e%252fsecret", "is double-encoded: decoded twice, it is ../secret"),
    ("spindle_density", "has an underscore, which the rule does not allow"),
    ("sp\u0131ndle-density", "has a dotless ı (U+0131), which [a-z] matches under re.IGNORECASE without re.ASCII"),
    ("a--b", "has two hyphens in a row"),
    ("-welcome", "starts with a hyphen"),
    ("welcome-", "ends with a hyphen"),
    ("-", "is a lone hyphen"),
    ("note-\u0663", "ends in an Arabic-Indic digit three (٣), a digit to \\d unless re.ASCII is set"),
    ("\uff11\uff12", "is two full-width digits (１２): digits to \\d unless re.ASCII is set, and 12 once NFKC-normalized"),
    ("a" * 65, "is longer than 64 characters"),
    ("", "is empty"),
    (None, "is not a string"),
    (42, "is not a string"),
    (b"welcome", "is bytes, not a string"),
]
LEGIT = ["welcome", "spindle-density", "lab-sync-2026-01-12", "journal-club-slow-oscillations", "a", "2026", "x" * 64]


def check_note_id_validator(is_safe_note_id, lab=None):
    """is_safe_note_id(note_id) must refuse every attack and accept every id the lab's rule allows."""
    if missing(is_safe_note_id):
        not_done("define is_safe_note_id(note_id) first.")
        return
    verdicts = []
    for note_id, safe, why in [(a, False, w) for a, w in ATTACKS] + [(i, True, "is a valid id") for i in LEGIT]:
        outcome = attempt(is_safe_note_id, note_id)
        if outcome.not_done:
            not_done("is_safe_note_id still raises NotImplementedError. Return True for a safe id, else False.")
            return
        if outcome.error:
            failed(f"is_safe_note_id({note_id!r}) raised {outcome.error_text}",
                   hint="A validator answers for any input: return False for what is not a string, do not raise.")
            return
        if not isinstance(outcome.value, bool):
            failed(f"is_safe_note_id({note_id!r}) returned {shown(outcome.value)}; return True or False.",
                   hint="A validator answers with a bool: an `and` chain gives back its last operand, and re's "
                        "match functions a Match or None, so turn such an answer into True or False.")
            return
        verdicts.append((note_id, safe, why, outcome.value))
    wrong = [(note_id, safe, why) for note_id, safe, why, said in verdicts if said != safe]
    if not wrong:
        passed(f"Your validator refused all {len(ATTACKS)} attacks and accepted all {len(LEGIT)} valid ids.")
        return
    note_id, safe, why = wrong[0]
    server = None
    if isinstance(note_id, str):
        with stdio_lab(lab) as wire:
            reply = wire.request("tools/call", {"name": "read_note", "arguments": {"note_id": note_id}})
        server = f"read_note({note_id!r}) → {server_said(reply.message)}"
    if safe:
        failed(f"Your validator refused {note_id!r}, which {why} ({len(wrong)} of {len(verdicts)} ids judged wrong).",
               server=server, hint="Do not refuse more than the rule does.",
               more="A valid id is lowercase ASCII letters and digits in words joined by single hyphens, at most "
                    "64 characters.")
        return
    failed(f"Your validator accepted {note_id!r}, which {why} ({len(wrong)} of {len(verdicts)} ids judged wrong).",
           server=server,
           hint="Allow, do not block: describe what a valid id is and accept only that, rather than listing "
                "what to refuse.",
           more=_more_for_attack(note_id))


def _more_for_attack(note_id):
    """The specific hint for an attack the validator let through."""
    if not isinstance(note_id, str):
        return "Test the type first: only a str can be an id, and a validator returns False rather than raise."
    if not note_id.isascii():
        folded = unicodedata.normalize("NFKC", note_id)
        return ("In Python's re, \\d and \\w (and [a-z] with re.IGNORECASE) match non-ASCII characters unless re.ASCII is "
                "set, and str.isalnum(), .isalpha() and .isdigit() accept the letters and digits of every alphabet: "
                "test str.isascii() too." + (
                    f" And judge the id as it arrives: unicodedata.normalize('NFKC') turns {note_id!r} into "
                    f"{folded!r}, which is not the string the server gets." if folded.isascii() else ""))
    if note_id.endswith("\n"):
        return ("$ also matches just before a trailing newline; a match of the whole string does not. Judge the id "
                "as it arrives: a strip() first removes what the server keeps.")
    if "%" in note_id:
        return ("Judge the id exactly as it arrives: the server uses that string, not a decoded one, so a validator "
                "that decodes first judges another id.")
    if any(ch.isupper() for ch in note_id):
        return "The rule's letters are lowercase ones: an uppercase letter anywhere, not only first, makes an alias."
    if any(ch in note_id for ch in "/ ") and ".." not in note_id and not note_id.startswith(("/", "~")):
        return "The rule's characters are a-z, 0-9 and the hyphen: a slash or a space between two words is neither."
    if "_" in note_id:
        return "The rule's characters are a-z, 0-9 and the hyphen; \\w also matches the underscore."
    if "-" in note_id and not any(ch in note_id for ch in "./\\%~"):
        return "A hyphen only ever sits between two letters or digits: never first, last or doubled."
    if len(note_id) > 64:
        return "The rule has a length too: at most 64 characters."
    return "Match the id from its first character to its last against the rule."
