"""OpenAIServer against a local HTTP server (in a thread) that serves the OpenAI completions schema.

The fake server's "model" is a character-level deterministic language: after character ``c`` it writes the next
letter of the alphabet, and the log-probability of a character is ``-0.1 * (ord(c) % 7)``.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("httpx")

from icml25.llm import OpenAIServer, load_model  # noqa: E402
from icml25.llm.openai_server import OpenAIServerError  # noqa: E402

REQUESTS: list[dict] = []


def char_lp(c: str) -> float:
    return -0.1 * (ord(c) % 7)


def next_char(c: str) -> str:
    return chr((ord(c) - 97 + 1) % 26 + 97) if c.isalpha() else "a"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # silence
        pass

    def _send(self, code: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append(body)
        if self.path != "/v1/completions":
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        if body["model"] not in ("fake", "strict", "plain"):
            return self._send(404, {"error": {"message": f"The model `{body['model']}` does not exist."}})
        if body.get("max_tokens") == 0 and (not body.get("echo") or body["model"] == "strict"):
            return self._send(400, {"error": {"message": "max_tokens must be >= 1"}})
        if body.get("return_tokens_as_token_ids"):  # token-id prompts (vLLM): next id = last id + 1
            return self._send(200, {"choices": self._id_choices(body)})
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for p in prompts:
            for _ in range(body.get("n", 1)):
                choices.append(self._choice(p, body, len(choices)))
        self._send(200, {"id": "cmpl-1", "object": "text_completion", "model": "fake", "choices": choices})

    def _id_choices(self, body: dict) -> list[dict]:
        out = []
        for p in body["prompt"]:
            nxt = (p[-1] + 1) % 50
            for j in range(body.get("n", 1)):
                top = {f"token_id:{nxt}": -0.05, f"token_id:{(nxt + 7) % 50}": -3.0, f"token_id:{(nxt + 9) % 50}": -4.0}
                tok = nxt if j % 2 == 0 else (nxt + 7) % 50  # samples alternate between the two likeliest
                out.append({"index": len(out), "text": "", "finish_reason": "length",
                            "logprobs": {"tokens": [f"token_id:{tok}"], "token_logprobs": [-0.05],
                                         "top_logprobs": [dict(list(top.items())[:body["logprobs"]])]}})
        return out

    def _choice(self, prompt: str, body: dict, index: int) -> dict:
        text, last = "", prompt[-1] if prompt else " "
        finish, stop_reason = "length", None
        for _ in range(body.get("max_tokens", 16)):
            last = next_char(last)
            text += last
            hit = [s for s in body.get("stop") or [] if s in text]
            if hit:
                text, finish, stop_reason = text[:text.index(hit[0])], "stop", hit[0]
                break
        k = body.get("logprobs")
        lp = None
        if k is not None:
            echo = bool(body.get("echo"))
            context = prompt + text
            start = 0 if echo else len(prompt)  # absolute index of the first reported token
            absolute = range(start, len(context))
            tlp = [None if (echo and a == 0) else char_lp(context[a]) for a in absolute]
            tops = [dict(list({next_char(context[a - 1]) if a else "a": -0.05, "Z": -3.0, "Q": -4.0}.items())[:k])
                    for a in absolute]
            offsets = [a if echo else a - start for a in absolute]
            lp = {"tokens": [context[a] for a in absolute], "token_logprobs": tlp, "top_logprobs": tops,
                  "text_offset": offsets}
        choice = {"index": index, "text": (prompt if body.get("echo") else "") + text, "logprobs": lp,
                  "finish_reason": finish, "stop_reason": stop_reason}
        if body["model"] == "plain":  # like llama.cpp / TGI / OpenAI: no stop_reason field
            del choice["stop_reason"]
        return choice


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    th = threading.Thread(target=httpd.serve_forever, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_generate_schema_and_grouping(server):
    lm = OpenAIServer(server + "/v1", model="fake")
    out = lm.generate(["abc", "xy"], n=2, temperature=0.7, top_p=0.9, max_tokens=4, seed=3)
    req = REQUESTS[-1]
    assert req["prompt"] == ["abc", "xy"] and req["n"] == 2 and req["max_tokens"] == 4
    assert req["temperature"] == 0.7 and req["top_p"] == 0.9 and req["seed"] == 3 and "stop" not in req
    assert [[g.text for g in r] for r in out] == [["defg", "defg"], ["zabc", "zabc"]]
    assert out[0][0].finish_reason == "length"
    np.testing.assert_allclose(out[0][0].token_logprobs, [char_lp(c) for c in "defg"])


def test_generate_stop(server):
    lm = OpenAIServer(server, model="fake")  # /v1 is appended to a bare host
    g = lm.generate(["abc"], max_tokens=10, stop=["gh", "zz"])[0][0]
    assert REQUESTS[-1]["stop"] == ["gh", "zz"]
    assert g.text == "def" and g.stop == "gh" and g.finish_reason == "stop"


def test_two_stops_without_stop_reason(server):
    """A server that cuts at a stop string but does not say which (no ``stop_reason``): the client cuts locally."""
    lm = OpenAIServer(server + "/v1", model="plain")
    assert lm.reports_stop_reason is None
    g = lm.generate(["abc"], max_tokens=10, stop=["zz", "gh"])[0][0]
    assert lm.reports_stop_reason is False and "stop" not in REQUESTS[-1]  # asked again without stop strings
    assert g.text == "def" and g.stop == "gh" and g.finish_reason == "stop"
    np.testing.assert_allclose(g.token_logprobs, [char_lp(c) for c in "def"])
    out = lm.generate(["abc", "uvw"], max_tokens=7, stop=["ij", "y"])  # now known: one request, cut here
    assert "stop" not in REQUESTS[-1] and REQUESTS[-1]["prompt"] == ["abc", "uvw"]
    assert (out[0][0].text, out[0][0].stop, out[0][0].finish_reason) == ("defgh", "ij", "stop")
    assert (out[1][0].text, out[1][0].stop, out[1][0].finish_reason) == ("x", "y", "stop")
    g = lm.generate(["abc"], max_tokens=3, stop=["zz", "qq"])[0][0]
    assert (g.text, g.stop, g.finish_reason) == ("def", None, "length")
    g = lm.generate(["abc"], max_tokens=10, stop=["gh"])[0][0]  # one stop string: the server's cut is unambiguous
    assert REQUESTS[-1]["stop"] == ["gh"] and (g.text, g.stop) == ("def", "gh")
    vllm = OpenAIServer(server + "/v1", model="fake")  # reports stop_reason: stop strings stay on the server
    g = vllm.generate(["abc"], max_tokens=10, stop=["zz", "gh"])[0][0]
    assert vllm.reports_stop_reason is True and REQUESTS[-1]["stop"] == ["zz", "gh"] and g.stop == "gh"


def test_logprobs_via_echo(server):
    lm = OpenAIServer(server + "/v1", model="fake")
    lps = lm.logprobs(["hello ", "ab"], ["world", "c"])
    assert REQUESTS[-1]["echo"] is True and REQUESTS[-1]["max_tokens"] == 0
    np.testing.assert_allclose(lps[0], [char_lp(c) for c in "world"])
    np.testing.assert_allclose(lps[1], [char_lp("c")])
    strict = OpenAIServer(server + "/v1", model="strict")  # refuses max_tokens=0: falls back to 1, drops the extra
    lps = strict.logprobs(["hello "], ["world"])
    assert REQUESTS[-1]["max_tokens"] == 1
    np.testing.assert_allclose(lps[0], [char_lp(c) for c in "world"])


def test_top_logprobs_and_next_token_logits(server):
    lm = OpenAIServer(server + "/v1", model="fake")
    tops = lm.top_logprobs(["abc", "x"], k=3)
    assert tops[0] == {"d": -0.05, "Z": -3.0, "Q": -4.0} and tops[1]["y"] == -0.05
    arr = lm.next_token_logits(["abc", "x"], vocab=["d", "y", "Q", "unseen"])
    np.testing.assert_allclose(arr, [[-0.05, -4.0, -4.0, -4.0], [-4.0, -0.05, -4.0, -4.0]])
    with pytest.raises(ValueError, match="needs vocab"):
        lm.next_token_logits(["abc"])


def test_clear_errors(server):
    with pytest.raises(OpenAIServerError, match=r"HTTP 404: The model `other` does not exist\."):
        OpenAIServer(server + "/v1", model="other").generate(["a"])
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectionError, match="cannot reach .* is the server running"):
        OpenAIServer(f"http://127.0.0.1:{port}/v1", model="fake", max_retries=0).generate(["a"])
    with pytest.raises(ValueError, match="base_url must be an http"):
        OpenAIServer("localhost:8000", model="m")


def test_load_model_specs(server, tmp_path):
    lm = load_model(f"openai:{server}/v1#fake")
    assert isinstance(lm, OpenAIServer) and lm.model == "fake" and lm.base_url == server + "/v1"
    assert lm.generate(["a"], max_tokens=2)[0][0].text == "bc"
    with pytest.raises(ValueError, match="expected openai:<base_url>#<model>"):
        load_model(f"openai:{server}/v1")
    with pytest.raises(ValueError, match="unknown model kind 'gguf'"):
        load_model("gguf:/x")
    with pytest.raises(ValueError, match="is not one of"):
        load_model("tiny")
    with pytest.raises(FileNotFoundError, match="TinyGPT.save"):
        load_model(f"tiny:{tmp_path}")
    with pytest.raises(FileNotFoundError, match="allow_download=True"):
        load_model(f"hf:{tmp_path / 'none'}")


def test_token_id_prompts_topk_and_samples(server):
    lm = OpenAIServer(server, model="fake", batch_size=2)
    ids, lps = lm.next_token_topk_ids([[1, 2, 3], [10], [48, 49]], k=2)
    req = REQUESTS[-1]
    assert req["prompt"] == [[48, 49]] and req["max_tokens"] == 1 and req["return_tokens_as_token_ids"] is True
    assert ids.tolist() == [[4, 11], [11, 18], [0, 7]]
    np.testing.assert_allclose(lps, [[-0.05, -3.0]] * 3)
    ids, _ = lm.next_token_topk_ids([[5]], k=5)  # the server reports only 3: the rest is -1 / -inf
    assert ids.tolist() == [[6, 13, 15, -1, -1]]
    assert lm.sample_next_token_ids([[1], [20]], n=3).tolist() == [[2, 9, 2], [21, 28, 21]]
    for bad in ([], [[]], [["a"]], "abc", [[-1]]):
        with pytest.raises((TypeError, ValueError)):
            lm.next_token_topk_ids(bad)
