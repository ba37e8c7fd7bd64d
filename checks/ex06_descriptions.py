"""Checks for exercise 06, task 3: shrink a tool description without losing what only a description can say."""

import copy
import re

from mcpwire.costs import count_tokens
from mcpwire.frames import dumps
from .attempt import missing
from .ex05_tools import tool_definitions
from .servers import stdio_lab
from .verdict import failed, not_done, passed

# --- task 3: a shorter description that keeps its meaning --------------------------------------

VERBOSE_SEARCH_DESCRIPTION = (
    "This tool allows you to search through all of the notes that have been written by the members of the "
    "sleep and memory lab. You should use this tool whenever the user asks about anything that might be "
    "written down in the lab notes, such as experiments, protocols, meetings or papers. It takes a query, "
    "which should be a string containing the words that you want to look for; the words are matched against "
    "the titles of the notes, the tags of the notes and the full text of the notes. You can also pass a limit, "
    "which is the maximum number of results that will be returned to you; it must be a whole number between "
    "1 and 50, and if you do not pass it, a default of 5 is used. The tool returns a list of hits, sorted so "
    "that the best match always comes first, and each hit contains the id of the note, its title, a score and "
    "a short snippet of text. The search results do not contain the whole note: if you want to read the full "
    "text of one of the notes, you should call the read_note tool with the id of that note."
)
MAX_DESCRIPTION_TOKENS = 40
# search_notes' arguments, the two tools, and read_note's argument: "read it with read_note(note_id)" is true.
ARGUMENTS = {"search_notes": {"query", "limit"}, "read_note": {"note_id"}}
# The fields of search_notes' outputSchema: "pass the hit's `id` to read_note" is true too.
HIT_FIELDS = {"hits", "id", "title", "score", "snippet"}
KNOWN_NAMES = {*ARGUMENTS, *ARGUMENTS["search_notes"], *ARGUMENTS["read_note"], *HIT_FIELDS}
SCHEMA_NUMBERS = {1, 5, 50}  # limit: minimum, default, maximum
# A model reads "top ten" as 10 just as it reads "top 10"; "one" (1) and "five" (5) are the schema's own.
NUMBER_WORDS = {"zero": 0, "two": 2, "three": 3, "four": 4, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                "eleven": 11, "twelve": 12, "dozen": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
                "hundred": 100}
# Backticked (a backticked call by its tool's name), snake_case, camelCase. camelCase needs two lowercase letters
# before the first capital: mRNA, pH, iPhone and eBay are words, not argument names.
NAME_PATTERNS = [r"`([A-Za-z_]\w*)(?:\([^`]*\))?`", r"\b[a-z]+(?:_[a-z0-9]+)+\b", r"\b[a-z]{2,}(?:[A-Z][a-z0-9]*)+\b"]

# Facts only the description can carry: the schema says nothing about them.
FACTS = [
    ("what the tool does (it searches the lab notes)",
     lambda text: re.search(r"\b(search|find)", text, re.I) and re.search(r"\bnotes?\b", text, re.I),
     "Say that it searches (or finds) notes: the schema cannot say what a tool is for."),
    ("that the best hits come first",
     lambda text: re.search(r"best|rank|relevan|score|sort|\btop\b", text, re.I),
     "The model needs to know the first hit is the best one (\"best first\", \"ranked\")."),
    ("how to read a hit in full (read_note)",
     lambda text: "read_note" in text,
     "Hits are not whole notes: name read_note, the tool that reads one."),
]


# A keyword test cannot read a sentence; these are the plainest ways to name read_note while saying it is not needed.
# Anything subtler passes the check, and the ✓ says that it looked for words, not for meaning.
NEGATED_READ_NOTE = [
    r"`?read_note`?\W*(?:is\s+|are\s+)?(?:not|never)\s+(?:\w+\s+)?(?:needed|necessary|required|useful)",
    r"`?read_note`?\W*(?:is\s+|are\s+)?(?:unnecessary|unneeded|redundant|optional)",
    r"\bno\s+need\s+(?:for|to)\s+(?:\w+\s+)?`?read_note",
    r"\b(?:without|never|don't|do\s+not|needn't|need\s+not)\s+(?:calling\s+|call\s+|using\s+|use\s+|needing\s+|need\s+)?`?read_note",
    r"\b(?:skip|skips|skipping|avoid|avoids|avoiding|bypass|bypasses)\s+(?:calling\s+|using\s+|the\s+)?`?read_note",
]


def negated_read_note(text):
    """The words that say read_note is not needed, or None."""
    found = (re.search(pattern, text, re.I) for pattern in NEGATED_READ_NOTE)
    return next((match[0] for match in found if match), None)


def verbose_search_tool(wire):
    """The lab's real search_notes definition, with the long-winded description."""
    tool = copy.deepcopy(tool_definitions(wire)["search_notes"])
    tool["description"] = VERBOSE_SEARCH_DESCRIPTION
    return tool


def model_view(tool):
    """What a host gives a model: name, description and inputSchema."""
    return {key: tool[key] for key in ("name", "description", "inputSchema")}


def contradictions(text):
    """Numbers and names in the description that the schema does not have."""
    found = []
    numbers = {int(n): n for n in re.findall(r"(?<![\w.])\d+(?!\w|\.\d)", text)}
    numbers.update({NUMBER_WORDS[word.lower()]: word for word in re.findall(r"[A-Za-z]+", text)
                    if word.lower() in NUMBER_WORDS})
    for number in sorted(set(numbers) - SCHEMA_NUMBERS):
        written = "" if numbers[number] == str(number) else f" (written {numbers[number]!r})"
        found.append(f"the number {number}{written}, which the schema does not have (its numbers are the limit's "
                     "minimum 1, default 5 and maximum 50)")
    for tool, inside in re.findall(r"\b(search_notes|read_note)\(([^)]*)\)", text):
        # An argument is a bare name or the name before = or :; what is passed (hit.id, hit['id'], "…") is none.
        for given in re.sub(r"(['\"]).*?\1", "", inside).split(","):
            named = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:[=:].*)?", given)
            if named and named[1] not in ARGUMENTS[tool]:
                name = named[1]
                found.append(f"{tool}({inside}), which names {name!r} as an argument of {tool}; its arguments "
                             f"are {', '.join(sorted(ARGUMENTS[tool]))}")
    names = set().union(*(re.findall(pattern, text) for pattern in NAME_PATTERNS))
    for name in sorted(names - KNOWN_NAMES):
        found.append(f"the name {name!r}, which is no argument, tool or field of a hit (the arguments are query "
                     "and limit, and read_note's note_id; the tools search_notes and read_note; the result's hits "
                     "and a hit's id, title, score and snippet)")
    return found


def check_short_description(description, lab=None):
    """A description of at most MAX_DESCRIPTION_TOKENS tokens that keeps the facts only a description can give."""
    if missing(description) or description == "":
        not_done("write short_description, a string.")
        return
    if not isinstance(description, str):
        failed(f"short_description is {type(description).__name__}; it must be a string.")
        return
    with stdio_lab(lab) as wire:
        verbose = verbose_search_tool(wire)
    tokens = count_tokens(description)
    before = count_tokens(VERBOSE_SEARCH_DESCRIPTION)
    if tokens > MAX_DESCRIPTION_TOKENS:
        failed(f"Your description is {tokens} tokens (the verbose one is {before}); the budget is "
               f"{MAX_DESCRIPTION_TOKENS}.",
               hint="Drop what the inputSchema already says: the argument names, that query is required, "
                    "the limit's range and default, what query is matched against.")
        return
    lost = [(fact, hint) for fact, present, hint in FACTS if not present(description)]
    if lost:
        failed(f"Your description ({tokens} tokens) no longer says {lost[0][0]}.", hint=lost[0][1])
        return
    negated = negated_read_note(description)
    if negated:
        failed(f"Your description says {negated!r}: it names read_note only to say it is not needed.",
               hint="A hit is not the whole note (id, title, score and a snippet): the model must still call "
                    "read_note to read one in full, and the description is where it learns that.")
        return
    wrong = contradictions(description)
    if wrong:
        failed(f"Your description mentions {wrong[0]}. That breaks rule 2: a description says nothing the schema "
               "contradicts, because a model takes every name and number in it at its word.",
               hint="Leave numbers and argument names to the schema; the description says what only it can say.")
        return
    shorter = {**verbose, "description": description}
    old, new = count_tokens(dumps(model_view(verbose))), count_tokens(dumps(model_view(shorter)))
    passed(f"Your description is {tokens} tokens (the verbose one is {before}). What a model reads of search_notes "
           f"went from {old} to {new} tokens ({100 * (old - new) / old:.0f}% less). It still has the words of the "
           "three facts (search or find and notes; best, ranked or the like; read_note), and no number or name the "
           "schema contradicts. The check reads words, not sentences: read yours once as a model would.")
