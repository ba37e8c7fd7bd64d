"""Exercise 06, task 3 (a shorter description): one that keeps its facts passes; one that loses or invents one fails."""

import pytest

import checks


def test_short_description_right(verdict, lab):
    out = verdict(checks.check_short_description, "Search lab notes; best hits first. Read one in full with read_note.", lab)
    assert out.startswith("✓ Your description is 16 tokens (the verbose one is 228)")


def test_short_description_over_budget(verdict, lab):
    out = verdict(checks.check_short_description, checks.VERBOSE_SEARCH_DESCRIPTION[:400], lab)
    assert out.startswith("✗ Your description is 82 tokens") and "the budget is 40" in out


def test_short_description_that_lost_a_fact(verdict, lab):
    out = verdict(checks.check_short_description, "Search the lab notes, best first.", lab)
    assert out.startswith("✗") and "how to read a hit in full (read_note)" in out


def test_short_description_contradicting_the_schema(verdict, lab):
    out = verdict(checks.check_short_description, "Search lab notes, best first, at most 10 hits. Read one with read_note.", lab)
    assert out.startswith("✗") and "the number 10" in out


def test_short_description_naming_an_argument_that_does_not_exist(verdict, lab):
    out = verdict(checks.check_short_description, "Search lab notes, best first; set max_hits. Read one with read_note.", lab)
    assert out.startswith("✗") and "'max_hits'" in out


def test_an_unwritten_description_is_not_done_yet(verdict, lab):
    assert verdict(checks.check_short_description, None, lab).startswith("not done yet:")


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 06 task 3 · a shorter description ----------------------------------------------------------------------

DESCRIPTION_RIGHT = [
    pytest.param("Search the lab notes; best hits first. Read one in full with read_note.", id="solution"),
    pytest.param("Finds lab notes, ranked by relevance. Hits are snippets: read_note(note_id) gives the whole note.",
                 id="names-read-notes-argument"),
    pytest.param("Search the lab notes; best first. Read one with read_note, passing the hit's `id`.",
                 id="names-the-hits-id-field"),
    pytest.param("Search lab notes, best first; search_notes(query, limit=5). Then read_note(note_id=\"…\").",
                 id="calls-with-the-real-argument-names"),
    # A value passed in a call is no argument name: only bare names and names before = or : are.
    pytest.param("Search the lab notes; best first. Read one in full with read_note(note_id=hit.id).",
                 id="a-call-passing-the-hits-id-by-name"),
    pytest.param("Search the lab notes; best first. Read one in full with read_note(hit['id']).",
                 id="a-call-passing-the-hits-id"),
    # Words with one lowercase letter before a capital are words, not camelCase arguments.
    pytest.param("Search the lab notes (EEG, mRNA, pH, iPhone logs); best first. Read one with read_note.",
                 id="science-and-product-words"),
    pytest.param("Search the lab notes; best first. Read one in full with `read_note(note_id)`.",
                 id="a-backticked-call"),
    # Negation words near read_note that do not say it is unneeded.
    pytest.param("Search the lab notes, best first. Hits are not whole notes: read_note reads one.",
                 id="hits-are-not-whole-notes"),
    pytest.param("Search lab notes; best first. A snippet does not replace read_note, which reads one in full.",
                 id="a-snippet-does-not-replace-read-note"),
    pytest.param("Search the lab notes (EEG in µV, Tomás's minutes); ranked, best first. read_note → full text.",
                 id="non-ascii-text"),
]
DESCRIPTION_WRONG = [
    pytest.param(checks.VERBOSE_SEARCH_DESCRIPTION, ("tokens", "the budget is 40"), id="the-verbose-one"),
    pytest.param("Search the lab notes. Read one in full with read_note.", ("best hits come first",), id="no-ranking"),
    pytest.param("Search the lab notes; best hits first.", ("read_note",), id="no-read-note"),
    pytest.param("Best hits first; read one in full with read_note.", ("what the tool does",), id="no-purpose"),
    pytest.param("Search the lab notes; best 10 hits first. Read one with read_note.",
                 ("the number 10", "rule 2"), id="a-number-the-schema-lacks"),
    pytest.param("Search the lab notes by `keywords`; best first. Read one with read_note.",
                 ("the name 'keywords'", "rule 2"), id="an-argument-that-does-not-exist"),
    pytest.param("Search the lab notes; best hits first. Read one in full with read_note(id).",
                 ("read_note(id)", "its arguments are note_id", "rule 2"), id="read-note-with-id"),
    pytest.param("Search the lab notes; best first. Read one with read_note(id=hit.id).",
                 ("names 'id' as an argument", "its arguments are note_id"), id="read-note-with-id-by-name"),
    pytest.param("Search the lab notes; best first. Read one with read_note(noteId: hit.id).",
                 ("'noteId'", "rule 2"), id="read-note-with-a-colon"),
    pytest.param("Search the lab notes; best first. Read one with `read_note(id)`.",
                 ("names 'id' as an argument",), id="a-backticked-call-with-id"),
    pytest.param("Search the lab notes; best first. Read one with read_note(noteId).",
                 ("'noteId'", "rule 2"), id="camel-case-argument-in-a-call"),
    pytest.param("Search the lab notes; best first; pass maxResults to cap hits. Read one with read_note.",
                 ("the name 'maxResults'", "rule 2"), id="camel-case-argument"),
    pytest.param("Search the lab notes; top ten hits, best first. Read one with read_note.",
                 ("the number 10 (written 'ten')", "rule 2"), id="a-number-in-words"),
    # Blind learner run: "0" failed while the word for it passed.
    pytest.param("Find lab notes, best first, zero or more hits; read_note reads a hit.",
                 ("the number 0 (written 'zero')", "rule 2"), id="zero-in-words"),
    pytest.param("Search the lab notes; best first. Read one with fetch_note.",
                 ("read_note",), id="the-wrong-tool"),
    pytest.param(["Search the lab notes; best first. Read one with read_note."], ("must be a string",), id="a-list"),
    # Issue 31: the keywords are all there, and the sentence says the opposite of the fact.
    pytest.param("Search the lab notes; best hits first, each one the whole note, so read_note is not needed.",
                 ("'read_note is not needed'", "not the whole note"), id="read-note-said-to-be-unneeded"),
    pytest.param("Search the lab notes, best first. No need for read_note: hits hold the full text.",
                 ("'No need for read_note'",), id="no-need-for-read-note"),
    pytest.param("Search lab notes, ranked; answer without calling read_note.",
                 ("'without calling read_note'",), id="without-calling-read-note"),
    pytest.param("Search the lab notes, best first; read_note is optional.", ("'read_note is optional'",),
                 id="read-note-optional"),
    # Found by the learner run of round 3: "skip" was no negation the check knew.
    pytest.param("Searches lab notes, best first; each hit already holds the full note, so skip read_note.",
                 ("'skip read_note'",), id="skip-read-note"),
]


@pytest.mark.parametrize("description", DESCRIPTION_RIGHT)
def test_short_description_right_answers_pass(verdict, lab, description):
    assert verdict(checks.check_short_description, description, lab).startswith("✓")


@pytest.mark.parametrize("description, phrases", DESCRIPTION_WRONG)
def test_short_description_wrong_answers_name_their_mistake(verdict, lab, description, phrases):
    out = verdict(checks.check_short_description, description, lab)
    assert fails_naming(out, phrases), out


def test_the_tick_claims_only_what_the_check_read(verdict, lab):
    out = verdict(checks.check_short_description, "Search lab notes; best hits first. Read one in full with read_note.",
                  lab)
    assert "It still has the words of the three facts" in out and "reads words, not sentences" in out
    assert "reads one in full" not in out
