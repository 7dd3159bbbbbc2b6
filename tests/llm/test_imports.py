"""The llm layer stays light: tokenizers, OpenAIServer and load_model import neither torch nor transformers."""

from __future__ import annotations

import subprocess
import sys


def test_light_names_do_not_import_torch():
    code = ("import sys, icml25.llm as L; L.OpenAIServer; L.CharTokenizer; L.ByteTokenizer; L.load_model; "
            "L.known_models; import icml25.llm.models_cli as M; M.status_rows(); "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
