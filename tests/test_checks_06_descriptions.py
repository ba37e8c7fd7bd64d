"""Exercise 06 task 3 check: a short description that keeps its facts passes; one that loses or invents one fails."""

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
