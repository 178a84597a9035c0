"""`assay judgments draft` against a real OpenAI-compatible chat server on loopback: only drafts whose quote
resolves exactly once are kept, each marked for review; the others are counted by reason."""

import json

import pytest
from retrieval.answer.chat_server import ChatServer, Reply, completion, content, status
from click.testing import CliRunner

from assay.retrieval.answer.client import ChatClient
from assay.cli import cli
from assay.inputs.corpus import load_corpus
from assay.golden.draft import MIN_PASSAGE_CHARS, PASSAGE_CHARS, draft, passages, sample
from assay.inputs.judgments.parse import load_judgments
from assay.inputs.judgments.resolve import resolve_gold

KEY_ENV, KEY = "ASSAY_TEST_DRAFT_KEY", "sk-draft-secret-1a2b3c"
REPEATED = "See the manual for details."


def paragraph(doc: str, k: int) -> str:
    words = " ".join(f"{doc}{k}w{i}" for i in range(80))
    return f"The {doc} paragraph {k} opens with its own sentence. {words}. {REPEATED}"


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for doc in ("alpha", "beta", "gamma"):
        text = "\n\n".join(paragraph(doc, k) for k in (1, 2, 3))
        (root / f"{doc}.md").write_text(f"# {doc}\n\n{text}\n", encoding="utf-8")
    (root / "empty-ish.md").write_text("# Title only\n", encoding="utf-8")  # nothing to draft from
    return root


def opening(corpus, s) -> str:
    """The first sentence of a sample's passage: it occurs once in its document."""
    text = load_corpus(corpus).by_id()[s.doc_id].text[s.start:s.end]
    return text[:text.index(".") + 1]


def reply(question: str, quote: str, form: str) -> Reply:
    return content(json.dumps({"question": question, "quote": quote, "form": form}))


def run(args, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    return CliRunner().invoke(cli, ["judgments", "draft", *map(str, args)])


def test_passages_are_paragraphs_merged_or_cut():
    text = "short\n\n" + "x " * 50 + "\n\n" + "y " * 50 + "\n\n" + "z " * 1000
    spans = passages(text)
    assert [text[s:e][:1] for s, e in spans] == ["s", "z", "z"]
    assert all(e - s <= PASSAGE_CHARS for s, e in spans)
    assert all(len(text[s:e].strip()) >= MIN_PASSAGE_CHARS for s, e in spans)
    assert passages("# Title only\n") == []


def test_samples_spread_over_documents_and_forms(corpus):
    loaded = load_corpus(corpus)
    first = sample(loaded, 3, seed=1)
    assert sorted(s.doc_id for s in first) == ["alpha.md", "beta.md", "gamma.md"]
    six = sample(loaded, 6, seed=1)
    assert six[:3] == first
    for doc in ("alpha.md", "beta.md", "gamma.md"):
        assert sorted(s.form for s in six if s.doc_id == doc) == ["gap", "match"]
        assert len({(s.start, s.end) for s in six if s.doc_id == doc}) == 2
    assert sample(loaded, 6, seed=1) == six
    assert len(sample(loaded, 50, seed=1)) == 9  # every passage once, no more
    assert any(sample(loaded, 6, seed=s) != six for s in range(2, 6))


def test_draft_keeps_only_quotes_that_resolve_once(tmp_path, corpus, monkeypatch):
    samples = sample(load_corpus(corpus), 7, seed=3)
    script = [
        reply("what opens the first paragraph", opening(corpus, samples[0]), samples[0].form),
        reply("a paraphrase", "a sentence the document never says", samples[1].form),
        reply("where are the details", REPEATED, samples[2].form),
        content("Sure! Here is a question about the passage."),
        content(json.dumps({"refused": "the passage is a table of contents"})),
        Reply(body=json.dumps(completion({"role": "assistant", "content": None, "refusal": "I can't help"}, "stop"))),
        content("```json\n" + json.dumps({"question": "how does it begin", "quote": opening(corpus, samples[6]),
                                          "form": samples[6].form}) + "\n```"),
    ]
    out = tmp_path / "drafts.jsonl"
    with ChatServer(script) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "drafter-1", "--base-url", server.url,
                      "--api-key-env", KEY_ENV, "-n", 7, "--seed", 3, "--out", out], monkeypatch)
    assert result.exit_code == 0, result.output

    kept_forms = sorted([samples[0].form, samples[6].form])
    asked = {f: sum(1 for s in samples if s.form == f) for f in ("gap", "match")}
    kept = ", ".join(f"{f} {kept_forms.count(f)}" for f in ("gap", "match") if kept_forms.count(f))
    lines = result.stderr.splitlines()
    assert lines[:5] == [
        f"  dropped draft-002 ({samples[1].doc_id}): not verbatim: 'a sentence the document never says'; nearest "
        + lines[0].split("; nearest ", 1)[1],
        f"  dropped draft-003 ({samples[2].doc_id}): ambiguous: '{REPEATED}' occurs 3 times",
        f"  dropped draft-004 ({samples[3].doc_id}): bad JSON: not JSON: 'Sure! Here is a question about the passage.'",
        f"  dropped draft-005 ({samples[4].doc_id}): refused: the passage is a table of contents",
        f"  dropped draft-006 ({samples[5].doc_id}): refused: I can't help",
    ]
    assert lines[0].split("; nearest ", 1)[1].startswith("(similarity ")
    assert lines[5] == (f"asked about 7 passages of 3 documents (gap {asked['gap']}, match {asked['match']}): kept 2 "
                        f"({kept}), dropped 5 (not verbatim 1, ambiguous 1, bad JSON 1, refused 2); 7 requests, "
                        "0 retries")
    assert lines[6] == (f"wrote 2 drafts to {out}, each with a review field: check each question, its quote and form, "
                        "delete the field, then merge them (cat, then assay judgments fmt)")
    assert KEY not in result.output

    # what the model was asked: the sampled passage, the form, JSON only, with the key from the environment
    assert len(server.requests) == 7
    first = server.requests[0]
    assert first["headers"]["Authorization"] == f"Bearer {KEY}"
    assert first["body"]["model"] == "drafter-1" and first["body"]["response_format"] == {"type": "json_object"}
    user = first["body"]["messages"][1]["content"]
    text = load_corpus(corpus).by_id()[samples[0].doc_id].text
    assert user == (f"Document: {samples[0].doc_id}\nForm: {samples[0].form}\n\nPassage:\n<<<\n"
                    f"{text[samples[0].start:samples[0].end]}\n>>>")

    drafts = load_judgments(out)
    assert [j.query_id for j in drafts.judgments] == ["draft-001", "draft-007"]
    spans = resolve_gold(drafts, load_corpus(corpus))  # every kept quote resolves exactly once
    assert [(s.doc_id, s.quote) for s in spans] == [(samples[0].doc_id, opening(corpus, samples[0])),
                                                    (samples[6].doc_id, opening(corpus, samples[6]))]
    first = drafts.judgments[0]
    assert (first.query, first.category, first.form) == ("what opens the first paragraph", "normal", samples[0].form)
    assert first.review == (f"drafted by drafter-1 from characters {samples[0].start}-{samples[0].end} of "
                            f"{samples[0].doc_id}; its quote is at {spans[0].start}-{spans[0].end}")
    assert CliRunner().invoke(cli, ["judgments", "fmt", str(out), "--check"]).exit_code == 0

    check = CliRunner().invoke(cli, ["judgments", "check", str(out), "--corpus", str(corpus), "--strict"])
    assert check.exit_code == 1
    assert (f"{out}:1 [unreviewed-draft] draft-001: not reviewed yet (drafted by drafter-1 from characters "
            f"{samples[0].start}-{samples[0].end}") in check.stdout


def test_an_existing_output_is_not_overwritten_without_force(tmp_path, corpus, monkeypatch):
    out = tmp_path / "drafts.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    with ChatServer([]) as server:
        args = ["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                "--api-key-env", KEY_ENV, "-n", 1, "--out", out]
        result = run(args, monkeypatch)
        assert result.exit_code == 2 and server.requests == []
        assert f"Error: {out} exists; pass --force to overwrite it" in result.stderr
        assert out.read_text(encoding="utf-8") == "mine\n"
        s, = sample(load_corpus(corpus), 1, seed=0)
        server.add(reply("q", opening(corpus, s), s.form))
        assert run(args + ["--force"], monkeypatch).exit_code == 0
    assert load_judgments(out).judgments[0].query_id == "draft-001"


def test_refused_credentials_stop_at_once_and_write_nothing(tmp_path, corpus, monkeypatch):
    out = tmp_path / "drafts.jsonl"
    with ChatServer([status(401, '{"error": "bad key ' + KEY + '"}')] * 3) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      "--api-key-env", KEY_ENV, "-n", 3, "--out", out], monkeypatch)
    assert result.exit_code == 5
    assert len(server.requests) == 1 and not out.exists()
    assert "HTTP 401" in result.stderr and KEY not in result.output


def test_a_key_with_a_trailing_newline_is_refused_before_any_request(tmp_path, corpus, monkeypatch):
    out = tmp_path / "drafts.jsonl"
    with ChatServer([]) as server:
        monkeypatch.setenv("ASSAY_TEST_DRAFT_KEY_NL", KEY + "\n")
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      "--api-key-env", "ASSAY_TEST_DRAFT_KEY_NL", "-n", 2, "--out", out], monkeypatch)
    assert result.exit_code == 1 and server.requests == [] and not out.exists()
    assert result.stderr == (f"error: model endpoint {server.url} (m): environment variable ASSAY_TEST_DRAFT_KEY_NL "
                             "has whitespace around the key (a trailing newline?); set it to the key alone, e.g. "
                             "export ASSAY_TEST_DRAFT_KEY_NL=\"$(tr -d '[:space:]' < KEYFILE)\"\n")


def test_when_every_request_fails_nothing_is_written(tmp_path, corpus, monkeypatch):
    out = tmp_path / "drafts.jsonl"
    with ChatServer([status(500), status(500)]) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      "--api-key-env", KEY_ENV, "-n", 2, "--out", out], monkeypatch)
    assert result.exit_code == 5 and len(server.requests) == 2 and not out.exists()
    assert result.stderr.startswith(f"error: model endpoint {server.url} (m): HTTP 500")


def test_no_draft_kept_is_an_error(tmp_path, corpus, monkeypatch):
    out = tmp_path / "drafts.jsonl"
    with ChatServer([content("not json")]) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      "--api-key-env", KEY_ENV, "-n", 1, "--out", out], monkeypatch)
    assert result.exit_code == 1 and not out.exists()
    assert result.stderr.endswith(f"error: no draft kept (bad JSON 1); nothing written to {out}\n")


def test_a_rate_limited_endpoint_stops_drafting_and_keeps_what_it_has(corpus):
    loaded = load_corpus(corpus)
    s = sample(loaded, 3, seed=0)
    with ChatServer([reply("q", opening(corpus, s[0]), s[0].form), status(429), status(429), status(429)]) as server:
        client = ChatClient(server.url, "m", backoff_s=(0.0, 0.0))
        drafts = draft(loaded, client, 3, seed=0)
    assert [r["query_id"] for r in drafts.records] == ["draft-001"]
    assert "3 consecutive HTTP 429 answers" in drafts.stopped and len(drafts.asked) == 1
    assert drafts.stats["rate_limited"] == 3


def test_a_bad_id_prefix_is_a_usage_error(tmp_path, corpus, monkeypatch):
    result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--id-prefix", "-x",
                  "--out", tmp_path / "d.jsonl"], monkeypatch)
    assert result.exit_code == 2 and "Invalid value for '--id-prefix'" in result.stderr


@pytest.mark.parametrize("option, value", [("-n", "0"), ("--count", "10001"), ("--seed", "-1"), ("--timeout", "0"),
                                           ("--min-interval", "-1")])
def test_a_bad_number_is_a_usage_error_before_any_request(tmp_path, corpus, monkeypatch, option, value):
    with ChatServer([]) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      option, value, "--out", tmp_path / "d.jsonl"], monkeypatch)
    assert result.exit_code == 2 and server.requests == [] and not (tmp_path / "d.jsonl").exists()
    assert "Invalid value for" in result.stderr


def test_passages_come_only_from_files_the_corpus_options_read(tmp_path, corpus, monkeypatch):
    loaded = load_corpus(corpus)
    s = [x for x in sample(loaded, 9, seed=0) if x.doc_id == "beta.md"][0]
    out = tmp_path / "d.jsonl"
    with ChatServer([reply("q", opening(corpus, s), s.form)]) as server:
        result = run(["--corpus", corpus, "--generator", "openai", "--model", "m", "--base-url", server.url,
                      "--api-key-env", KEY_ENV, "-n", 1, "--include", "beta.md", "--out", out], monkeypatch)
    assert result.exit_code == 0, result.output
    assert "Document: beta.md\n" in server.requests[0]["body"]["messages"][1]["content"]
    assert [e.doc for j in load_judgments(out).judgments for e in j.gold] == ["beta.md"]
