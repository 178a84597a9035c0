import pytest

from assay.retrieval.answer.contract import REASONS, Citation, Claim, parse_claims, validate

CONTEXT = {
    "a.md#0": "The cache is flushed every   ten minutes.\nWrites are\tbatched before the flush.",
    "b.md#0": "Retries back off exponentially, up to five attempts.",
}


def norm(s: str) -> str:
    return " ".join(s.split())


def claim(text, *cites):
    return Claim(text, tuple(Citation(c, q) for c, q in cites))


def check_one(*cites, max_quote=240):
    (checked,) = validate([claim("x", *cites)], CONTEXT, max_quote=max_quote)
    return checked


def test_reasons_are_the_contracts_vocabulary():
    assert REASONS == ("uncited", "unknown_citation", "quote_mismatch", "bad_quote")


def test_a_claim_with_valid_citations_is_kept_with_offsets():
    c = check_one(("b.md#0", "up to five attempts"))
    assert (c.kept, c.reason) == (True, None)
    (cite,) = c.citations
    assert cite.valid and cite.reason is None
    assert CONTEXT["b.md#0"][cite.start:cite.end] == "up to five attempts"


def test_uncited():
    c = check_one()
    assert (c.kept, c.reason, c.citations) == (False, "uncited", ())


@pytest.mark.parametrize("cite, reason", [
    (("zzz#9", "anything"), "unknown_citation"),
    (("b.md#0", "   "), "bad_quote"),
    (("b.md#0", ""), "bad_quote"),
    (("b.md#0", "up to six attempts"), "quote_mismatch"),
    (("b.md#0", "UP TO FIVE ATTEMPTS"), "quote_mismatch"),  # case counts
])
def test_every_drop_reason(cite, reason):
    c = check_one(cite)
    assert (c.kept, c.reason) == (False, reason)
    (cite,) = c.citations
    assert (cite.valid, cite.reason, cite.start, cite.end) == (False, reason, None, None)


def test_check_order_unknown_before_bad_before_mismatch():
    # An unknown chunk with an empty quote is unknown_citation, not bad_quote.
    assert check_one(("nope", "")).reason == "unknown_citation"
    # A too-long quote that also does not occur is bad_quote, not quote_mismatch.
    assert check_one(("b.md#0", "q" * 241)).reason == "bad_quote"


def test_one_bad_citation_drops_the_claim_and_names_the_first_failure():
    c = check_one(("b.md#0", "five attempts"), ("a.md#0", "hourly"), ("zzz", "x"))
    assert (c.kept, c.reason) == (False, "quote_mismatch")
    assert [x.valid for x in c.citations] == [True, False, False]
    assert [x.reason for x in c.citations] == [None, "quote_mismatch", "unknown_citation"]
    assert c.citations[0].start is not None


def test_claims_keep_their_index_and_order():
    claims = [claim("one"), claim("two", ("b.md#0", "Retries")), claim("three", ("a.md#0", "nope"))]
    checked = validate(claims, CONTEXT)
    assert [(c.index, c.text, c.kept, c.reason) for c in checked] == [
        (0, "one", False, "uncited"), (1, "two", True, None), (2, "three", False, "quote_mismatch")]


@pytest.mark.parametrize("quote", [
    "every ten minutes. Writes are batched",      # chunk has runs of spaces, a newline and a tab
    "every\n\nten   minutes.\tWrites  are batched",  # quote has its own odd whitespace
    "  every ten minutes.  ",                     # surrounding whitespace is ignored
])
def test_whitespace_normalization_and_exact_offsets(quote):
    (cite,) = check_one(("a.md#0", quote)).citations
    assert cite.valid
    text = CONTEXT["a.md#0"]
    matched = text[cite.start:cite.end]
    assert norm(matched) == norm(quote)
    assert matched == matched.strip()
    assert text.index("every") == cite.start


def test_offsets_across_collapsed_whitespace():
    text = "alpha\n\n\n   beta \t gamma"
    (checked,) = validate([claim("x", ("c", "alpha beta gamma"))], {"c": text})
    cite = checked.citations[0]
    assert (cite.start, cite.end) == (0, len(text))


def test_first_occurrence_is_reported():
    text = "ab ab  ab"
    (checked,) = validate([claim("x", ("c", "ab ab"))], {"c": text})
    assert (checked.citations[0].start, checked.citations[0].end) == (0, 5)


def test_whitespace_in_the_quote_needs_whitespace_in_the_text():
    (checked,) = validate([claim("x", ("c", "alp ha"))], {"c": "alpha"})
    assert checked.reason == "quote_mismatch"


def test_max_quote_boundary():
    text = "w" * 300
    ok, too_long = validate([claim("x", ("c", "w" * 240)), claim("y", ("c", "w" * 241))], {"c": text})
    assert ok.kept and (ok.citations[0].start, ok.citations[0].end) == (0, 240)
    assert too_long.reason == "bad_quote"
    # Length counts after stripping the ends.
    (padded,) = validate([claim("x", ("c", "  " + "w" * 240 + "\n"))], {"c": text})
    assert padded.kept
    (small,) = validate([claim("x", ("c", "w" * 11))], {"c": text}, max_quote=10)
    assert small.reason == "bad_quote"


def test_validation_agrees_with_a_normalized_substring_reference():
    import random

    rng = random.Random(7)
    pieces = ["a", "b", "ab", "ba", ".", " ", "  ", "\n", "\t", "\n\n"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        quote = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        (checked,) = validate([claim("x", ("c", quote))], {"c": text})
        cite = checked.citations[0]
        if not quote.strip():
            assert cite.reason == "bad_quote"
            continue
        found = norm(quote) in norm(text)
        assert cite.valid == found, (text, quote)
        if found:
            matched = text[cite.start:cite.end]
            assert norm(matched) == norm(quote)
            # The first occurrence: nothing earlier in the text matches.
            assert norm(quote) not in norm(text[:cite.end - 1])


def test_each_claim_is_checked_alone_and_the_same_every_time():
    # "ten minutes" starts after "The cache is flushed every" (26 characters) and its three spaces: 29 to 40
    claims = [claim("a", ("a.md#0", "ten minutes")), claim("b", ("zzz", "q")), claim("c")]
    want = [(0, "a", True, None, (("a.md#0", "ten minutes", True, None, 29, 40),)),
            (1, "b", False, "unknown_citation", (("zzz", "q", False, "unknown_citation", None, None),)),
            (2, "c", False, "uncited", ())]
    for _ in range(2):
        got = validate(claims, CONTEXT)
        assert [(c.index, c.text, c.kept, c.reason,
                 tuple((t.chunk_id, t.quote, t.valid, t.reason, t.start, t.end) for t in c.citations))
                for c in got] == want


# --- parse_claims -------------------------------------------------------------------------------

def test_parse_a_well_formed_payload():
    payload = {"claims": [{"text": "Retries stop at five.",
                           "citations": [{"chunk_id": "b.md#0", "quote": "up to five attempts"}]},
                          {"text": "Uncited.", "citations": []}],
               "insufficient_evidence": False}
    claims, insufficient, errors = parse_claims(payload)
    assert errors == [] and insufficient is False
    assert claims == [Claim("Retries stop at five.", (Citation("b.md#0", "up to five attempts"),)),
                      Claim("Uncited.", ())]


def test_missing_citations_key_is_an_uncited_claim_not_a_schema_error():
    claims, _, errors = parse_claims({"claims": [{"text": "t"}]})
    assert errors == [] and claims == [Claim("t", ())]
    assert validate(claims, CONTEXT)[0].reason == "uncited"


def test_insufficient_evidence_defaults_to_false():
    assert parse_claims({"claims": []}) == ([], False, [])


def test_insufficient_evidence_without_claims():
    assert parse_claims({"insufficient_evidence": True}) == ([], True, [])
    assert parse_claims({"insufficient_evidence": True, "claims": []}) == ([], True, [])


def test_insufficient_evidence_with_claims_keeps_them():
    payload = {"insufficient_evidence": True,
               "claims": [{"text": "t", "citations": [{"chunk_id": "c", "quote": "q"}]}]}
    assert parse_claims(payload) == ([Claim("t", (Citation("c", "q"),))], True, [])


@pytest.mark.parametrize("payload, expected", [
    (["not", "an", "object"], ["payload: must be an object with \"claims\", got list"]),
    ("{}", ["payload: must be an object with \"claims\", got str"]),
    ({}, ["claims: missing (omit it only with \"insufficient_evidence\": true)"]),
    ({"claims": {"text": "t"}}, ["claims: must be a list, got dict"]),
    ({"claims": [], "insufficient_evidence": "yes"},
     ["insufficient_evidence: must be true or false, got 'yes'"]),
    ({"claims": ["t"]}, ["claims[0]: must be an object like {\"text\": ..., \"citations\": [...]}"]),
    ({"claims": [{"citations": []}]}, ["claims[0].text: missing"]),
    ({"claims": [{"text": 3}]}, ["claims[0].text: must be a string, got int"]),
    ({"claims": [{"text": "  "}]}, ["claims[0].text: must not be empty"]),
    ({"claims": [{"text": "t", "citations": "c#0"}]}, ["claims[0].citations: must be a list, got str"]),
    ({"claims": [{"text": "t", "citations": ["c#0"]}]},
     ["claims[0].citations[0]: must be an object like {\"chunk_id\": ..., \"quote\": ...}"]),
])
def test_schema_errors_name_their_path(payload, expected):
    claims, _, errors = parse_claims(payload)
    assert claims == [] and errors == expected


def test_schema_errors_are_all_reported_and_drop_every_claim():
    payload = {"claims": [
        {"text": "fine", "citations": [{"chunk_id": "c", "quote": "q"}]},
        {"text": "t", "citations": [{"chunk_id": "c", "quote": "q"}, {"chunk_id": "c"},
                                    {"chunk_id": 7, "quote": None}]},
    ]}
    claims, insufficient, errors = parse_claims(payload)
    assert claims == [] and insufficient is False
    assert errors == [
        "claims[1].citations[1].quote: missing",
        "claims[1].citations[2].chunk_id: must be a string, got int",
        "claims[1].citations[2].quote: must be a string, got NoneType",
    ]
