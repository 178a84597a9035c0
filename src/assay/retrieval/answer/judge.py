"""An optional judge: a different model, asked whether each kept claim is supported by its quotes.

Configured with --judge-url and --judge-model (a model other than the generator's).
Each verdict is stored; a judge that fails is recorded as ``unavailable`` for that claim
and never replaced by the generator or by a guess. A reply that cannot be read as
``{"supported": true|false}`` (any other JSON, content that is not text, JSON nested too deep)
is recorded as ``unparsed`` with the problem; nothing a judge answers can stop the run. Replies
and errors come from the chat client with credentials already redacted.
Without a judge, citation precision and faithfulness stay rule-based, and reports say so.
"""

from __future__ import annotations

PROMPT = ("Decide whether the claim is fully supported by the quoted evidence alone. Reply with only a JSON "
          'object {"supported": true} or {"supported": false}.\n\nClaim: {claim}\n\nEvidence:\n{evidence}')


class Judge:
    def __init__(self, client):
        self.client = client

    def config(self) -> dict:
        return {"base_url": self.client.shown_url, "model": self.client.model,
                "api_key_env": self.client.api_key_env}

    def judge(self, claim: str, quotes: list[str]) -> tuple[str, str | None, str | None]:
        """(verdict, raw reply, error)."""
        from assay.core.errors import ModelEndpointError, RunBlocked

        evidence = "\n".join(f"- {q}" for q in quotes)
        messages = [{"role": "user", "content": PROMPT.replace("{claim}", claim).replace("{evidence}", evidence)}]
        try:
            resp = self.client.chat(messages, response_format={"type": "json_object"})
        except RunBlocked as exc:
            return "unavailable", getattr(exc, "raw", None), str(exc)
        except ModelEndpointError as exc:
            return "unavailable", getattr(exc, "raw", None), str(exc)
        from assay.retrieval.answer.generate import content_payload

        body, problem = content_payload(resp.message)
        if problem is None and not (isinstance(body, dict) and "supported" in body):
            problem = f'expected an object with "supported", got {type(body).__name__}'
        if problem is not None:
            return "unparsed", resp.raw, f"cannot read the verdict: {problem}"
        verdict = body["supported"]
        if not isinstance(verdict, bool):
            return "unparsed", resp.raw, "'supported' is not true or false"
        return ("supported" if verdict else "unsupported"), resp.raw, None
