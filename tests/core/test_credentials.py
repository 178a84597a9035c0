"""Credentials: which variables hold them, a child environment without them, and redaction in every form."""

import json
import urllib.parse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.credentials import child_environment, is_secret_name, redact, redact_all, secret_values

KEY = "sk-proj/AbC+9_x\"y"  # a slash, a quote and a plus: the characters escapes treat specially


def u_escaped(text, upper=False):
    return "".join(("\\u%04X" if upper else "\\u%04x") % ord(c) for c in text)


FORMS = {
    "raw": KEY,
    "json": json.dumps(KEY)[1:-1],
    "json-slash": json.dumps(KEY)[1:-1].replace("/", "\\/"),
    "u-lower": u_escaped(KEY),
    "u-upper": u_escaped(KEY, upper=True),
    "u-mixed": KEY[:3] + u_escaped(KEY[3:8]) + json.dumps(KEY[8:])[1:-1],
    "json-in-json": json.dumps(json.dumps(KEY))[3:-3],
    "u-in-json": json.dumps(u_escaped(KEY))[1:-1],
    "u-escaped-backslash": "\\u005c" + u_escaped(KEY)[1:],
    "url": urllib.parse.quote(KEY, safe=""),
    "url-all": "".join("%%%02x" % b for b in KEY.encode()),
    "url-twice": urllib.parse.quote(urllib.parse.quote(KEY, safe=""), safe=""),
    "html": "".join(f"&#{ord(c)};" for c in KEY),
    "html-hex": "".join(f"&#x{ord(c):x};" for c in KEY),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_of_the_key_is_redacted(form):
    text = f"before {FORMS[form]} after"
    assert redact(text, [KEY]) == "before *** after"


def test_redaction_keeps_json_valid_and_redacts_what_decoding_reassembles():
    doc = json.dumps({"arguments": json.dumps({"text": f"the key is {KEY}"})})
    redacted = redact(doc, [KEY])
    assert KEY not in redacted
    assert json.loads(json.loads(redacted)["arguments"]) == {"text": "the key is ***"}
    assert redact_all({"a": [KEY, (1, f"x{KEY}")], KEY: None}, [KEY]) == {"a": ["***", (1, "x***")], "***": None}


def test_nothing_else_changes():
    text = "sk-proj/AbC+9_x but not the whole key; %73k; \\u0073; 42"
    assert redact(text, [KEY]) == text
    assert redact(None, [KEY]) is None and redact("", [KEY]) == "" and redact("abc", []) == "abc"


@settings(max_examples=200, deadline=None)
@given(key=st.text(st.characters(min_codepoint=33, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
                   min_size=6, max_size=24),
       choices=st.lists(st.sampled_from(["raw", "u", "U", "url", "html"]), min_size=24, max_size=24),
       around=st.text(max_size=20))
@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_any_key_in_any_mixture_of_forms_is_redacted(key, choices, around):
    def spell(c, how):
        if how == "raw":
            return c
        if how in "uU":
            units = json.dumps(c)[1:-1] if ord(c) > 0xFFFF or c in "\"\\" else "\\u%04x" % ord(c)
            if ord(c) > 0xFFFF:
                units = json.dumps(c, ensure_ascii=True)[1:-1]
            return units.upper().replace("\\U", "\\u") if how == "U" else units
        if how == "url":
            return urllib.parse.quote(c, safe="")
        return f"&#{ord(c)};"

    spelled = "".join(spell(c, how) for c, how in zip(key, choices))
    out = redact(around + spelled + around, [key])
    assert "***" in out and key not in out and spelled not in out


def test_which_names_hold_credentials():
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                 "my_service_secret", "COHEREAPIKEY", "TOKEN", "GOOGLE_APPLICATION_CREDENTIALS"):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "LANG", "PWD", "KEYBOARD", "TOKENIZERS_PARALLELISM", "SSH_AUTH_SOCK"):
        assert not is_secret_name(name), name


def test_child_environment_and_secret_values():
    env = {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "OPENAI_API_KEY": "sk-openai-123456",
           "X_TOKEN": "short", "MY_CRED": "configured-cred", "TOKENIZERS_PARALLELISM": "false"}
    assert child_environment(environ=env) == {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8"}
    # an allowlist: credentials not named like one stay out too; a name passed is passed, whatever it is
    env.update({"DATABASE_URL": "postgres://u:pw@db/x", "SECRET_KEY_BASE": "f00", "SLACK_WEBHOOK_URL": "https://h",
                "LC_ALL": "C", "TMPDIR": "/t", "MY_INDEX": "/idx"})
    assert child_environment(passed=["MY_INDEX", "MY_CRED", None, "UNSET"], environ=env) == {
        "PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "LC_ALL": "C", "TMPDIR": "/t", "MY_INDEX": "/idx",
        "MY_CRED": "configured-cred"}
    # configured names count whatever their length; names caught by the rule only from 8 characters
    assert secret_values(["MY_CRED", "UNSET"], env) == ["sk-openai-123456", "configured-cred"]


def test_a_value_with_whitespace_around_it_is_redacted_as_sent_and_as_read():
    # a key read from a file keeps its newline; a server or a program echoes it back without
    env = {"MY_CRED": "sk-nl-0123456789\n", "DB_PASSWORD": "  hunter2-hunter2 "}
    assert secret_values(["MY_CRED"], env) == ["  hunter2-hunter2 ", "sk-nl-0123456789\n", "sk-nl-0123456789",
                                               "hunter2-hunter2"]
    text = "invalid key sk-nl-0123456789, password hunter2-hunter2 (sk-nl-0123456789\n)"
    assert redact(text, secret_values(["MY_CRED"], env)) == "invalid key ***, password *** (***)"


def test_a_key_no_header_can_carry_is_named_never_shown(monkeypatch):
    from assay.core.credentials import key_problem, read_key
    from assay.core.errors import ConfigError

    assert key_problem("sk-proj-AbC_9-x.y") is None
    assert key_problem("sk-abc\n") == key_problem(" sk-abc") == "has whitespace around the key (a trailing newline?)"
    assert key_problem("sk-ab\u00e9") == "holds a character that is not ASCII (at position 6 of 6)"
    assert key_problem("sk-a\x00b") == key_problem("sk a") == "holds whitespace or a control character inside the key"
    monkeypatch.setenv("ASSAY_TEST_BAD_KEY", "sk-secret-\u00e9t\u00e9")
    with pytest.raises(ConfigError) as err:
        read_key("ASSAY_TEST_BAD_KEY", "somewhere")
    assert "sk-secret" not in str(err.value) and "ASSAY_TEST_BAD_KEY" in str(err.value)
    monkeypatch.setenv("ASSAY_TEST_BAD_KEY", "")
    assert read_key("ASSAY_TEST_BAD_KEY", "somewhere") is None and read_key(None, "somewhere") is None


def test_a_url_is_shown_without_the_credentials_it_carries():
    from assay.core.credentials import redact_config_urls, redact_url, url_secrets

    url = "https://svc:p%40ss-word-1@api.example.com:8443/v1/x?api_key=sk-url-123456&api-version=2024-02-01#t=1"
    assert redact_url(url) == "https://***@api.example.com:8443/v1/x?api_key=***&api-version=***#***"
    assert redact_url("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1"  # nothing to hide: unchanged
    assert redact_url("https://h/v1?sk-bare-token") == "https://h/v1?***"
    assert redact_url("http://[::1/x") == "***" and redact_url(None) is None
    # what comes back from a server is redacted: the password (as written and decoded), a credential-named
    # parameter's value, and a long opaque value; a short version or date is left alone in replies
    assert url_secrets(url) == ["p%40ss-word-1", "sk-url-123456", "p@ss-word-1"]
    assert url_secrets("https://h/?sig=abcdefgh12&v=1&opaque=0123456789abcdefXYZ") == ["0123456789abcdefXYZ",
                                                                                       "abcdefgh12"]
    config = {"settings": {"url": url, "judge_base_url": None}, "retrieval": {"generator": {"base_url": url}},
              "stages": ["external"]}
    assert redact_config_urls(config) == {"settings": {"url": redact_url(url), "judge_base_url": None},
                                          "retrieval": {"generator": {"base_url": redact_url(url)}},
                                          "stages": ["external"]}


def test_a_chat_client_never_shows_the_credentials_of_its_url(monkeypatch):
    from assay.core.errors import ModelEndpointError
    from assay.retrieval.answer.client import ChatClient
    from assay.retrieval.answer.generate import OpenAIGenerator
    from assay.retrieval.answer.judge import Judge

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(f"http://u:pw-chat-url-99@127.0.0.1:{port}/v1?key=sk-chat-url-0123", "m")
    with pytest.raises(ModelEndpointError) as err:
        client.chat([{"role": "user", "content": "hi"}])
    shown = [str(err.value), repr(client), json.dumps(OpenAIGenerator(client).config()),
             json.dumps(Judge(client).config()), json.dumps(client.log)]
    assert f"model endpoint http://***@127.0.0.1:{port}/v1?key=*** (m): cannot reach" in shown[0]
    assert not [t for t in shown if "pw-chat-url-99" in t or "sk-chat-url-0123" in t]
