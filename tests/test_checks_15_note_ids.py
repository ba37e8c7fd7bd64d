"""Exercise 15 checks (note ids): a right answer passes, typical wrong answers fail with the right explanation."""

import re

from checks import ex15_note_ids as note_ids


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
