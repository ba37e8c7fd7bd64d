"""Exercise 15 checks (note ids): a right answer passes, typical wrong answers fail with the right explanation."""

import re
import unicodedata
from urllib.parse import unquote

import pytest

from checks import ex15_note_ids as note_ids


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


def test_note_id_validator_right(verdict, lab):
    def right(note_id):
        return isinstance(note_id, str) and len(note_id) <= 64 and bool(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", note_id))
    assert verdict(note_ids.check_note_id_validator, right, lab).startswith(f"✓ Your validator refused all {len(note_ids.ATTACKS)} attacks")


def test_note_id_validator_with_match_and_dollar(verdict, lab):
    out = verdict(note_ids.check_note_id_validator,
                  lambda i: isinstance(i, str) and bool(re.match(r"^[a-z0-9-]+$", i)), lab)
    assert out.startswith("✗ Your validator accepted 'welcome\\n'")
    assert "is not a valid note id" in out  # what the lab server answered


def test_note_id_validator_as_a_blocklist(verdict, lab):
    out = verdict(note_ids.check_note_id_validator,
                  lambda i: isinstance(i, str) and ".." not in i and not i.startswith("/"), lab)
    assert out.startswith("✗ Your validator accepted '~/welcome'") and "Allow, do not block" in out


def test_note_id_validator_that_raises_on_none(verdict, lab):
    out = verdict(note_ids.check_note_id_validator, lambda i: bool(re.fullmatch(r"[a-z0-9-]+", i)), lab)
    assert out.startswith("✗ is_safe_note_id(None) raised TypeError")


def test_note_id_validator_stub(verdict, lab):
    def stub(note_id):
        raise NotImplementedError("your code here")
    assert verdict(note_ids.check_note_id_validator, stub, lab).startswith("not done yet")


# --- 15 task 1 · note ids --------------------------------------------------------------------------------

def is_safe(*, pattern=r"[a-z0-9]+(?:-[a-z0-9]+)*", flags=re.ASCII, whole=True, limit=64, type_check=True):
    def work(note_id):
        if type_check and not isinstance(note_id, str):
            return False
        if limit is not None and len(note_id) > limit:
            return False
        if whole:
            return re.fullmatch(pattern, note_id, flags) is not None
        return re.match(pattern + "$", note_id, flags) is not None
    return work


ID_RIGHT = [
    pytest.param(is_safe(), id="solution"),
    pytest.param(lambda i: type(i) is str and 0 < len(i) <= 64 and i.isascii() and all(
        w.isalnum() and w == w.lower() for w in i.split("-")), id="split-on-hyphens"),
    pytest.param(lambda i: isinstance(i, str) and 0 < len(i) <= 64 and all(
        w and set(w) <= set("abcdefghijklmnopqrstuvwxyz0123456789") for w in i.split("-")), id="str-methods-and-a-set"),
]
ID_WRONG = [
    pytest.param(is_safe(pattern=r"[a-z0-9-]{1,64}"), ("'a--b'", "two hyphens in a row", "never first, last or doubled"),
                 id="hyphens-anywhere"),
    pytest.param(is_safe(pattern=r"[a-z\d]+(?:-[a-z\d]+)*", flags=0), ("Arabic-Indic digit", "re.ASCII"),
                 id="unicode-digits"),
    pytest.param(is_safe(pattern=r"\w+(?:-\w+)*", flags=0), ("accepted",), id="word-class-without-ascii"),
    pytest.param(is_safe(whole=False), ("'welcome\\n'", "trailing newline"), id="match-and-dollar"),
    pytest.param(is_safe(limit=None), ("longer than 64", "length"), id="no-length-bound"),
    pytest.param(is_safe(type_check=False), ("raised TypeError", "not a string"), id="no-type-check"),
    pytest.param(is_safe(pattern=r"[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*"), ("'Welcome'", "uppercase alias"),
                 id="uppercase-allowed"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:-[a-z0-9]+)*", flags=re.ASCII | re.IGNORECASE), ("'Welcome'",),
                 id="ignorecase"),
    pytest.param(lambda i: isinstance(i, str) and ".." not in i and "/" not in i, ("accepted", "Allow, do not block"),
                 id="blocklist"),
    pytest.param(lambda i: isinstance(i, str) and bool(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i)) and len(i) < 64,
                 ("refused 'xxxx", "Do not refuse more"), id="off-by-one-length"),
    pytest.param(lambda i: "yes" if is_safe()(i) else "no", ("return True or False",), id="returns-text"),
    pytest.param(lambda i: isinstance(i, str) and is_safe()(unquote(i)), ("'welc%6Fme'", "exactly as it arrives"),
                 id="decodes-first"),
    pytest.param(is_safe(pattern=r"[a-z0-9_]+(?:-[a-z0-9_]+)*"), ("'spindle_density'", "underscore"),
                 id="underscore-allowed"),
    pytest.param(lambda i: isinstance(i, str) and i == i.lower() and is_safe(flags=re.IGNORECASE)(i),
                 ("dotless", "re.IGNORECASE"), id="ignorecase-without-ascii"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:[-/][a-z0-9]+)*"), ("'notes/welcome'", "a slash between two words"),
                 id="slash-between-words"),
    pytest.param(is_safe(pattern=r"[a-z0-9]+(?:[- ][a-z0-9]+)*"), ("'spindle density'", "a slash or a space"),
                 id="space-between-words"),
    pytest.param(is_safe(pattern=r"[a-z0-9][a-zA-Z0-9]*(?:-[a-zA-Z0-9]+)*"), ("'spindle-Density'", "not only first"),
                 id="uppercase-after-the-first-letter"),
    # Written with str methods, not a regex: the hint names what they do, not re's flags or $.
    pytest.param(lambda i: isinstance(i, str) and 0 < len(i) <= 64 and all(
        w.isalnum() and w == w.lower() for w in i.split("-")), ("'wеlcome'", "str.isalnum()"),
                 id="str-methods-without-isascii"),
    # Normalized before the test: the full-width digits pass as 12, and the hint says so, not only re.ASCII.
    pytest.param(lambda i: is_safe()(unicodedata.normalize("NFKC", i)) if isinstance(i, str) else False,
                 ("accepted '１２'", "unicodedata.normalize('NFKC') turns '１２' into '12'"), id="nfkc-first"),
    # A number and its digits as text are different JSON values: 42 is not the id "42".
    pytest.param(lambda i: is_safe()(str(i)), ("42", "is not a string"), id="str-of-anything"),
    pytest.param(lambda i: isinstance(i, str) and is_safe()(i.strip()), ("'welcome\\n'", "strip()"),
                 id="stripped-first"),
    pytest.param(lambda i: isinstance(i, str) and len(i) <= 64 and re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", i),
                 ("returned None;", "a Match or None"), id="returns-a-match-object"),
]


@pytest.mark.parametrize("work", ID_RIGHT)
def test_note_id_validator_right_answers_pass(verdict, lab, work):
    assert verdict(note_ids.check_note_id_validator, work, lab).startswith("✓ Your validator refused all")


@pytest.mark.parametrize("work, phrases", ID_WRONG)
def test_note_id_validator_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(note_ids.check_note_id_validator, work, lab)
    assert fails_naming(out, phrases), out
