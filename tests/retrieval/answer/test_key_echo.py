"""A server that echoes the API key back in every form, in every place a reply can carry it: nothing
stored in the warehouse and nothing printed may hold the key in any form."""

import json
import urllib.parse

from chat_server import ChatServer, echo_key, status, tool_call_completion
from click.testing import CliRunner
import pytest

from assay.cli import cli
from assay.core.credentials import redact
from assay.store.warehouse import Warehouse

KEY = "sk-echo/TEST+key-0123456789abcdef"


def u_escaped(text):
    return "".join("\\u%04x" % ord(c) for c in text)


FORMS = {  # how the key may come back inside a JSON string
    "raw": lambda k: k,
    "u-escaped": u_escaped,
    "slash-escaped": lambda k: k.replace("/", "\\/"),
    "url-encoded": lambda k: urllib.parse.quote(k, safe=""),
}


def in_arguments(form):
    # The tool call's arguments are JSON inside JSON: the \u escape is inside the inner document,
    # so json.loads of the reply keeps it as text and json.loads of the arguments makes the key.
    def render(key):
        inner = ('{"claims": [{"text": "the key is ' + FORMS[form](key) + '", "citations": '
                 '[{"chunk_id": "nope.md#0-1", "quote": "' + FORMS[form](key) + '"}]}], '
                 '"insufficient_evidence": false}')
        return json.dumps(tool_call_completion(inner))
    return echo_key(render)


def in_content(form):
    return echo_key(lambda key: json.dumps({"choices": [{"message": {"role": "assistant",
                                                                     "content": "key " + FORMS[form](key)}}]}))


def in_error_body(form):
    return echo_key(lambda key: '{"error": "invalid key ' + FORMS[form](key) + '"}', code=401)


def in_header(form):
    return echo_key(lambda key: '{"error": "bad request"}', code=400,
                    headers=lambda key: {"X-Echo": FORMS[form](key), "Retry-After": FORMS[form](key)})


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_an_echoed_key_is_never_stored_nor_printed(tmp_path, monkeypatch, mini_corpus, mini_judgments):
    monkeypatch.setenv("ASSAY_ECHO_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # 5 questions reach the model per run, in three runs: tool-call arguments (then content without a
    # tool call, and content again as the JSON fallback), error bodies, headers and a body that is not JSON
    script = [in_arguments(f) for f in FORMS] + [in_content("u-escaped"), in_content("url-encoded")]
    script += [in_error_body(f) for f in FORMS] + [in_header("raw")]
    script += [status(200, "not json " + KEY)] + [in_header(f) for f in FORMS]
    warehouse = tmp_path / "w.duckdb"
    outputs = []
    with ChatServer(script) as server:
        for _ in range(3):
            out = CliRunner().invoke(cli, ["run", "--pipeline", "bm25", "--chunk-size", "120",
                                           "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                           "--generator", "openai", "--generator-url", server.url,
                                           "--generator-model", "m", "--generator-api-key-env", "ASSAY_ECHO_KEY",
                                           "--warehouse", str(warehouse)])
            outputs.append(out.output)
        sent = [r["headers"].get("Authorization") for r in server.requests]
    assert len(sent) == len(script) and all(a == f"Bearer {KEY}" for a in sent)  # the key did go out
    with Warehouse.open(warehouse, read_only=True) as wh:
        claims = [t for t, in wh.con.execute("SELECT text FROM claims").fetchall()]
        stored = [v for (t,) in wh.con.execute("SELECT table_name FROM information_schema.tables "
                                               "WHERE table_type = 'BASE TABLE'").fetchall()
                  for row in wh.con.execute(f'SELECT * FROM "{t}"').fetchall() for v in row if isinstance(v, str)]
        errors = [e for e, in wh.con.execute("SELECT error FROM answers WHERE error IS NOT NULL").fetchall()]
    assert sorted(claims) == ["the key is ***"] * len(FORMS)  # reached claims.text before
    assert any("invalid key ***" in e for e in errors)
    leaks = [v for v in stored + outputs if redact(v, [KEY]) != v]
    assert leaks == []


def _transforms(key):
    import base64

    return {"base64": base64.b64encode(key.encode()).decode(), "reversed": key[::-1], "split": " ".join(key)}


def _echoes(script_of):
    # per question: an error body, a 200 that is no chat completion, a tool call that does not parse and a
    # fallback that is no JSON, each carrying the key transformed as no redactor can undo
    return [echo_key(lambda k: '{"error": "bad key ' + _transforms(k)["base64"] + '"}', code=500),
            echo_key(lambda k: "not json " + _transforms(k)["reversed"]),
            echo_key(lambda k: json.dumps(tool_call_completion('{"claims": [' + _transforms(k)["split"]))),
            echo_key(lambda k: json.dumps({"choices": [{"message": {"content": "no " + _transforms(k)["base64"]}}]})),
            echo_key(lambda k: '{"error": "' + _transforms(k)["reversed"] + '"}', code=503),
            echo_key(lambda k: '{"error": "' + _transforms(k)["reversed"] + '"}', code=503),
            echo_key(lambda k: '{"error": "' + _transforms(k)["reversed"] + '"}', code=503)][script_of]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_key_echoed_transformed_is_kept_out_only_by_storing_no_reply_text(tmp_path, monkeypatch, mini_corpus,
                                                                          mini_judgments):
    """No redactor undoes base64, reversal or splitting (docs/security.md says so): with --max-reply-chars 0 no
    text of any reply is stored, so none of them is; by default the replies are kept, and so is the key."""
    monkeypatch.setenv("ASSAY_ECHO_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    warehouse, config = tmp_path / "w.duckdb", tmp_path / "assay.toml"
    config.write_text('[pipelines.fast]\nextends = "bm25"\ngenerator_backoff_s = [0.0]\n')
    stored = {}
    for keep in ("0", "65536"):
        script = [_echoes(i) for i in range(7)]
        with ChatServer(script) as server:
            out = CliRunner().invoke(cli, ["run", "--pipeline", "fast", "--config", str(config), "--chunk-size", "120",
                                           "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                           "--generator", "openai", "--generator-url", server.url,
                                           "--generator-model", "m", "--generator-api-key-env", "ASSAY_ECHO_KEY",
                                           "--max-reply-chars", keep,
                                           "--warehouse", str(warehouse)])
            assert len(server.requests) == len(script) + 1  # the last question: "no scripted reply left"
        assert out.exit_code == 0, out.output
        run_id = out.stdout.strip()
        with Warehouse.open(warehouse, read_only=True) as wh:
            stored[keep] = [v for (t,) in wh.con.execute("SELECT table_name FROM information_schema.tables "
                                                         "WHERE table_type = 'BASE TABLE'").fetchall()
                            for row in wh.con.execute(f'SELECT * FROM "{t}"').fetchall() for v in row
                            if isinstance(v, str) and run_id in row]
            raws = wh.con.execute("SELECT count(*) FROM answer_raw WHERE run_id = ?", [run_id]).fetchone()[0]
            errors = [e for e, in wh.con.execute("SELECT error FROM answers WHERE run_id = ? AND error IS NOT NULL "
                                                 "ORDER BY query_id", [run_id]).fetchall()]
        if keep == "0":
            assert raws == 0 and errors and all("(reply text not kept: max_reply_chars is 0)" in e for e in errors)
        else:
            assert raws > 0
    forms = list(_transforms(KEY).values())
    assert [v for v in stored["0"] if any(f in v for f in forms)] == []
    assert [v for v in stored["65536"] if any(f in v for f in forms)] != []  # what the setting is for
