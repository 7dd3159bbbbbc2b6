"""Real-LLM path: a tiny random transformers model and a local completions server drive the search."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("httpx")

from icml25.rstar_math.domain.step_format import StepFormat  # noqa: E402
from icml25.rstar_math.execution.sandbox import SubprocessExecutor  # noqa: E402
from icml25.rstar_math.models.real_llm import HiddenStateValueHead, LMStepPolicy, main, run_eval  # noqa: E402
from icml25.rstar_math.search.mcts import MCTS, MCTSConfig  # noqa: E402


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory):
    from icml25.llm import save_random_gpt2

    d = save_random_gpt2(tmp_path_factory.mktemp("gpt2tiny"), ["x = 1 + 2\nprint(x)\n<end_of_step> \\boxed{3}"] * 5,
                         n_layer=1, n_embd=16, n_positions=1024)
    torch.save({"v_head.summary.weight": torch.randn(1, 16), "v_head.summary.bias": torch.zeros(1)},
               d / "value_head.bin")
    return d


def test_hf_policy_and_value_head_drive_mcts(hf_dir):
    from icml25.llm import load_model

    lm = load_model(f"hf:{hf_dir}")
    fmt = StepFormat.official()
    scorer = HiddenStateValueHead(lm, hf_dir / "value_head.bin")
    s = scorer.score(["a", "b"], [" x", " y"])
    assert s.shape == (2,) and np.all(np.abs(s) <= 1)
    cfg = MCTSConfig(n_candidates=2, rollouts=2, max_depth=3, mode="inference", max_tokens=8)
    (t,) = MCTS(LMStepPolicy(lm), SubprocessExecutor(timeout_s=3), scorer=scorer, config=cfg, fmt=fmt).search(
        [("What is 1 + 2?", None)])
    assert t.root.children and t.rollouts_done == 2  # a random model writes junk: failure terminals, no crash
    res = run_eval("gsm8k", f"hf:{hf_dir}", str(hf_dir / "value_head.bin"), method="bon", n=2, limit=2,
                   max_depth=2, max_tokens=8)
    assert res["n_problems"] == 2 and 0.0 <= res["bon@2"]["acc"] <= 1.0


def test_bad_inputs_give_clear_errors(tmp_path, capsys):
    with pytest.raises(ValueError, match="ppm-head"):
        run_eval("gsm8k", "hf:/nonexistent", None, method="mcts", limit=1)
    assert main(["--data", "gsm8k", "--policy", "hf:/does/not/exist", "--method", "greedy", "--limit", "1"]) == 2
    assert "error" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match="official eval format"):
        run_eval("gsm8k", "hf:/x", data_path=str(bad), method="greedy")
    with pytest.raises(FileNotFoundError):
        HiddenStateValueHead(type("M", (), {"hidden_states": None})(), tmp_path / "none.bin")


class _StepServer(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for p in prompts:
            if "<end_of_output>" in p:
                text, stop = "<answer>\\boxed{3}", "<end_of_answer>"
            else:
                text, stop = "<code>\nx = 1 + 2\nprint(x)\n", "<end_of_code>"
            for _ in range(body.get("n", 1)):
                choices.append({"index": len(choices), "text": text, "finish_reason": "stop", "stop_reason": stop,
                                "logprobs": None})
        data = json.dumps({"id": "c", "object": "text_completion", "model": body["model"], "choices": choices})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())


def test_openai_compatible_server_policy():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _StepServer)
    th = threading.Thread(target=httpd.serve_forever, daemon=True)
    th.start()
    try:
        from icml25.llm import load_model

        lm = load_model(f"openai:http://127.0.0.1:{httpd.server_address[1]}/v1#fake")
        pol = LMStepPolicy(lm)
        steps = pol.sample_steps(["q"], n=2, stop=list(StepFormat().stop))
        assert steps == [["<code>\nx = 1 + 2\nprint(x)\n<end_of_code>"] * 2]
        fmt = StepFormat.official()
        (t,) = MCTS(pol, SubprocessExecutor(timeout_s=3), config=MCTSConfig(n_candidates=2, rollouts=1),
                    fmt=fmt).search([("What is 1 + 2?", "3")])
        assert t.solved()
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_eval_command_with_official_ppm_directory(hf_dir, tmp_path, capsys):
    out = tmp_path / "res.json"
    argv = ["--data", "gsm8k", "--policy", f"hf:{hf_dir}", "--ppm", str(hf_dir), "--method", "bon", "--n", "2",
            "--limit", "2", "--max-tokens", "8", "--out", str(out)]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads(out.read_text())
    assert printed["bon@2"]["acc"] == saved["bon@2"]["acc"] and len(saved["bon@2"]["correct"]) == 2
    assert "correct" not in printed["bon@2"]  # the summary stays short; per-problem outcomes go to --out
    before = out.read_text()
    assert main(argv) == 2 and "exists" in capsys.readouterr().err and out.read_text() == before
    no_head = tmp_path / "ppm_without_head"
    no_head.mkdir()
    assert main(argv[:4] + ["--ppm", str(no_head), "--limit", "1"]) == 2
    assert "value_head.bin" in capsys.readouterr().err
    with pytest.raises(ValueError, match="either --ppm"):
        run_eval("gsm8k", f"hf:{hf_dir}", str(hf_dir / "value_head.bin"), ppm=str(hf_dir), method="bon", limit=1)


class _BrokenServer(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b"<html>not json</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_eval_command_with_a_broken_or_absent_server(capsys):
    import socket

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _BrokenServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        argv = ["--data", "gsm8k", "--method", "greedy", "--limit", "1", "--policy"]
        assert main(argv + [f"openai:http://127.0.0.1:{httpd.server_address[1]}/v1#m"]) == 2
        err = capsys.readouterr().err
        assert "non-JSON" in err and "Traceback" not in err
    finally:
        httpd.shutdown()
        httpd.server_close()
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(argv + [f"openai:http://127.0.0.1:{port}/v1#m"]) == 2
    assert "server running" in capsys.readouterr().err
