"""Exercise 11's checks: a right translation passes, typical wrong ones fail with the right explanation."""

import copy
import json

import pytest

import checks

PREFIX = "io.modelcontextprotocol/"
HANDSHAKE = ("initialize", "notifications/initialized")


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


def envelope_right(initialize):
    params = initialize["params"]
    return {PREFIX + "protocolVersion": "2026-07-28", PREFIX + "clientCapabilities": params["capabilities"],
            PREFIX + "clientInfo": params["clientInfo"]}


def translate_right(legacy_frames, envelope_from=envelope_right):
    envelope = envelope_from(next(f for f in legacy_frames if f["method"] == "initialize"))
    modern = []
    for frame in legacy_frames:
        if frame["method"] not in HANDSHAKE:
            frame = copy.deepcopy(frame)
            frame.setdefault("params", {}).setdefault("_meta", {}).update(copy.deepcopy(envelope))
            modern.append(frame)
    return modern


def stub(*args):
    raise NotImplementedError("your code here")


# --- task 1 · the envelope from the handshake ---------------------------------------------------

def test_envelope_from_initialize_right(verdict):
    assert verdict(checks.check_envelope_from_initialize, envelope_right).startswith("✓ envelope_from moved")


def test_envelope_keeping_the_handshake_version(verdict):
    def old_version(initialize):
        return {**envelope_right(initialize), PREFIX + "protocolVersion": initialize["params"]["protocolVersion"]}
    out = verdict(checks.check_envelope_from_initialize, old_version)
    assert out.startswith("✗") and "names the version '2025-11-25'" in out and "-32022" in out


def test_envelope_forgetting_the_capabilities(verdict):
    out = verdict(checks.check_envelope_from_initialize,
                  lambda initialize: {**envelope_right(initialize), PREFIX + "clientCapabilities": {}})
    assert "clientCapabilities = {}" in out and 'Copy params["capabilities"]' in out


def test_envelope_returning_a_frame(verdict):
    out = verdict(checks.check_envelope_from_initialize, lambda initialize: {"_meta": envelope_right(initialize)})
    assert "not the _meta dict itself" in out


def test_envelope_with_unprefixed_keys(verdict):
    out = verdict(checks.check_envelope_from_initialize,
                  lambda initialize: {key.removeprefix(PREFIX): value for key, value in envelope_right(initialize).items()})
    assert out.startswith("✗") and "the key 'protocolVersion'" in out and "prefix" in out


def test_envelope_with_a_log_level_nobody_asked_for(verdict):
    # logLevel is a real 2026-07-28 envelope key, so the message must not call it unknown.
    out = verdict(checks.check_envelope_from_initialize,
                  lambda initialize: {**envelope_right(initialize), PREFIX + "logLevel": "info"})
    assert out.startswith("✗") and "keys the initialize said nothing about" in out and "logLevel" in out


def test_envelope_stub(verdict):
    assert verdict(checks.check_envelope_from_initialize, stub).startswith("not done yet")


# --- task 2 · translate the session ----------------------------------------------------------

def test_translation_right(verdict):
    out = verdict(checks.check_translation, translate_right)
    assert out.startswith("✓ A 2026-07-28 server gave your 4 requests the same answers")
    assert "handshake lines you dropped were 230" in out


def test_translation_keeping_the_handshake(verdict):
    def with_handshake(legacy_frames):
        return [copy.deepcopy(legacy_frames[0]), *translate_right(legacy_frames)]
    out = verdict(checks.check_translation, with_handshake)
    assert out.startswith("✗ Your frames still hold initialize") and "-32600" in out


def test_translation_with_the_envelope_beside_params(verdict):
    def beside(legacy_frames):
        envelope = envelope_right(legacy_frames[0])
        return [{**f, "_meta": envelope} for f in legacy_frames if f["method"] not in HANDSHAKE]
    out = verdict(checks.check_translation, beside)
    assert "The server answered: error -32602" in out and "_meta goes inside params" in out


def test_translation_renumbering_the_ids(verdict):
    def renumbered(legacy_frames):
        modern = translate_right(legacy_frames)
        for number, frame in enumerate(modern, start=1):
            frame["id"] = number
        return modern
    out = verdict(checks.check_translation, renumbered)
    assert "have the ids [1, 2, 3, 4, 5]" in out and "matched to the legacy ones by id" in out


def test_translation_naming_the_legacy_version(verdict):
    def legacy_version(initialize):
        return {**envelope_right(initialize), PREFIX + "protocolVersion": "2025-11-25"}
    out = verdict(checks.check_translation, lambda frames: translate_right(frames, legacy_version))
    assert "error -32022" in out and "names '2025-11-25'" in out


def test_translation_without_params_for_tools_list(verdict):
    def crashes(legacy_frames):
        return [dict(f, params={**f["params"], "_meta": {}}) for f in legacy_frames if f["method"] not in HANDSHAKE]
    out = verdict(checks.check_translation, crashes)
    assert out.startswith("✗ translate raised KeyError") and "create them before adding _meta" in out


def test_translation_without_client_info(verdict):
    # The server accepts it (clientInfo is a SHOULD), so only the check can notice.
    def anonymous(initialize):
        return {key: value for key, value in envelope_right(initialize).items() if key != PREFIX + "clientInfo"}
    out = verdict(checks.check_translation, lambda frames: translate_right(frames, anonymous))
    assert out.startswith("✗") and "carries no io.modelcontextprotocol/clientInfo" in out and "SHOULD say who it is" in out


def test_translation_with_the_printed_envelope_hard_coded(verdict):
    printed = envelope_right(checks.LEGACY_SESSION[0])
    out = verdict(checks.check_translation, lambda frames: translate_right(frames, lambda initialize: printed))
    assert out.startswith("✗ For another session") and "session's own initialize" in out


def test_translation_that_changes_the_legacy_frames(verdict):
    def in_place(legacy_frames):
        envelope = envelope_right(legacy_frames[0])
        modern = [f for f in legacy_frames if f["method"] not in HANDSHAKE]
        for frame in modern:
            frame.setdefault("params", {}).setdefault("_meta", {}).update(envelope)
        return modern
    out = verdict(checks.check_translation, in_place)
    assert out.startswith("✗ translate changed the legacy frames it was given") and "copy.deepcopy" in out


def test_translation_stub(verdict):
    assert verdict(checks.check_translation, stub).startswith("not done yet")


def test_translation_dropping_every_frame_without_id(verdict):
    def requests_only(legacy_frames):
        return [frame for frame in translate_right(legacy_frames) if "id" in frame]
    out = verdict(checks.check_translation, requests_only)
    assert out.startswith("✗ Your frames leave out notifications/cancelled") and "only the handshake" in out, out


def test_translation_overwriting_the_meta_there_was(verdict):
    def overwrites(legacy_frames):
        envelope = envelope_right(legacy_frames[0])
        modern = []
        for frame in legacy_frames:
            if frame["method"] not in HANDSHAKE:
                frame = copy.deepcopy(frame)
                frame.setdefault("params", {})["_meta"] = copy.deepcopy(envelope)
                modern.append(frame)
        return modern
    out = verdict(checks.check_translation, overwrites)
    assert out.startswith("✗ Request 3 lost _meta.progressToken") and "into the _meta that is there" in out, out


def translate_with_new_dicts(legacy_frames):
    """Written differently: new frames and a new _meta from both dicts, the legacy frames never touched."""
    envelope = envelope_right(next(f for f in legacy_frames if f["method"] == "initialize"))
    modern = []
    for frame in legacy_frames:
        if frame["method"] in HANDSHAKE:
            continue
        params = dict(frame.get("params", {}))
        params["_meta"] = {**params.get("_meta", {}), **envelope}
        modern.append({**frame, "params": params})
    return modern


def translate_leaving_the_cancel_bare(legacy_frames):
    """Written differently: the envelope on requests only; the cancel notification goes on as it was."""
    envelope = envelope_right(next(f for f in legacy_frames if f["method"] == "initialize"))
    return [copy.deepcopy(frame) if "id" not in frame else
            {**frame, "params": {**frame.get("params", {}), "_meta": {**envelope, **frame.get("params", {}).get("_meta", {})}}}
            for frame in legacy_frames if frame["method"] not in HANDSHAKE]


def test_translation_written_differently(verdict):
    for translate in (translate_with_new_dicts, translate_leaving_the_cancel_bare):
        assert verdict(checks.check_translation, translate).startswith("✓ A 2026-07-28 server gave your 4 requests")


# --- 11 task 1 · the envelope from the handshake ----------------------------------------------------------

def envelope_from(*, version="2026-07-28", capabilities=True, info=True, prefix=PREFIX, wrap=False):
    def work(initialize):
        params = initialize["params"]
        envelope = {prefix + "protocolVersion": params["protocolVersion"] if version is None else version,
                    prefix + "clientCapabilities": params["capabilities"] if capabilities else {}}
        if info:
            envelope[prefix + "clientInfo"] = params["clientInfo"]
        return {"_meta": envelope} if wrap else envelope
    return work


ENVELOPE_RIGHT = [
    # A JSON round trip keeps the non-ASCII title of the third initialize as it is.
    pytest.param(lambda init: json.loads(json.dumps({
        PREFIX + "protocolVersion": "2026-07-28", PREFIX + "clientCapabilities": init["params"]["capabilities"],
        PREFIX + "clientInfo": init["params"]["clientInfo"]})), id="json-round-trip"),
    pytest.param(envelope_from(), id="solution"),
    pytest.param(lambda init: {f"{PREFIX}{key}": value for key, value in [
        ("protocolVersion", "2026-07-28"), ("clientCapabilities", copy.deepcopy(init["params"]["capabilities"])),
        ("clientInfo", dict(init["params"]["clientInfo"]))]}, id="comprehension-with-copies"),
]
ENVELOPE_WRONG = [
    pytest.param(lambda init: {PREFIX + "protocolVersion": "2026-07-28",
                               PREFIX + "clientCapabilities": init["params"]["capabilities"],
                               PREFIX + "clientInfo": {key: init["params"]["clientInfo"][key] for key in ("name", "version")}},
                 ("the initialize declared", "Zürich", "as it is"), id="client-info-without-its-title"),
    pytest.param(envelope_from(version=None), ("names the version '2025-11-25'", "-32022"), id="handshake-version"),
    pytest.param(envelope_from(capabilities=False), ("clientCapabilities = {}",), id="capabilities-dropped"),
    pytest.param(envelope_from(wrap=True), ("not the _meta dict itself",), id="returns-a-frame"),
    pytest.param(envelope_from(prefix=""), ("the key 'protocolVersion'", "prefix"), id="keys-without-prefix"),
    pytest.param(envelope_from(info=False), ("has no io.modelcontextprotocol/clientInfo",), id="client-info-dropped"),
]


@pytest.mark.parametrize("work", ENVELOPE_RIGHT)
def test_envelope_from_initialize_right_answers_pass(verdict, work):
    assert verdict(checks.check_envelope_from_initialize, work).startswith("✓ envelope_from moved")


@pytest.mark.parametrize("work, phrases", ENVELOPE_WRONG)
def test_envelope_from_initialize_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_envelope_from_initialize, work)
    assert fails_naming(out, phrases), out


# --- 11 task 2 · translate the session -----------------------------------------------------------------------

def translate(*, drop=HANDSHAKE, where="params", renumber=False, envelope=envelope_from(), create_params=True,
              retype=None):
    def work(legacy_frames):
        meta = envelope(next(f for f in legacy_frames if f["method"] == "initialize"))
        modern = []
        for number, frame in enumerate(f for f in legacy_frames if f["method"] not in drop):
            frame = copy.deepcopy(frame)
            if where == "top":
                frame["_meta"] = copy.deepcopy(meta)
            elif create_params:
                frame.setdefault("params", {}).setdefault("_meta", {}).update(copy.deepcopy(meta))
            else:
                frame["params"].setdefault("_meta", {}).update(copy.deepcopy(meta))
            if renumber:
                frame["id"] = number + 1
            if retype is not None and "id" in frame:
                frame["id"] = retype(frame["id"])
            modern.append(frame)
        return modern
    return work


TRANSLATE_WRONG = [
    pytest.param(translate(drop=("notifications/initialized",)), ("still hold initialize", "-32600"),
                 id="initialize-kept"),
    pytest.param(translate(where="top"), ("error -32602", "_meta goes inside params"), id="envelope-beside-params"),
    pytest.param(translate(renumber=True), ("have the ids", "matched to the legacy ones by id"), id="ids-renumbered"),
    pytest.param(translate(retype=str), ("have the ids ['2', '3', 'read-1', '5']", "the legacy ones had [2, 3, 'read-1', 5]",
                                         "2 and \"2\" are different ids"), id="ids-as-text"),
    pytest.param(translate(envelope=envelope_from(version="2025-11-25")), ("error -32022", "names '2025-11-25'"),
                 id="legacy-version"),
    pytest.param(translate(create_params=False), ("raised KeyError", "create them before adding _meta"),
                 id="params-assumed"),
    # Sorting mixes 2 and "read-1": the crash is blamed on the ids' two types, not on a missing params.
    pytest.param(lambda legacy: sorted(translate()(legacy), key=lambda frame: frame.get("id", 0)),
                 ("raised TypeError", "two JSON types", "without sorting"), id="sorted-by-id"),
    pytest.param(translate(envelope=envelope_from(info=False)), ("carries no io.modelcontextprotocol/clientInfo", "SHOULD say who it is"),
                 id="client-info-dropped"),
    pytest.param(translate(envelope=lambda initialize: envelope_from()(checks.LEGACY_SESSION[0])),
                 ("For another session", "session's own initialize"), id="printed-envelope-hard-coded"),
]


def test_translation_right_answer_passes(verdict):
    assert verdict(checks.check_translation, translate()).startswith("✓ A 2026-07-28 server gave your 4 requests")


@pytest.mark.parametrize("work, phrases", TRANSLATE_WRONG)
def test_translation_wrong_answers_name_their_mistake(verdict, work, phrases):
    out = verdict(checks.check_translation, work)
    assert fails_naming(out, phrases), out
