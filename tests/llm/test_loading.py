"""``load_configured_model``: the model a reproduction's config names, or one UsageError line naming the field."""

from __future__ import annotations

import pytest

from icml25.core.errors import UsageError
from icml25.llm import TinyGPT, load_configured_model, load_model


def test_loads_what_load_model_loads(tmp_path):
    pytest.importorskip("torch")
    from icml25.llm import CharTokenizer, TinyGPTConfig

    lm = TinyGPT(TinyGPTConfig(n_layer=1, n_head=2, n_embd=8, block_size=16), CharTokenizer.from_texts(["abc"]),
                 seed=0)
    lm.save(tmp_path / "m")
    got = load_configured_model(f"tiny:{tmp_path / 'm'}", field="model", paper="demo")
    ref = load_model(f"tiny:{tmp_path / 'm'}")
    assert isinstance(got, TinyGPT)
    assert (got.next_token_logits(["ab"]) == ref.next_token_logits(["ab"])).all()


@pytest.mark.parametrize("spec, why", [("hf:/nonexistent/folder", "nonexistent"), ("nonsense", "not one of"),
                                       ("pretrained:no-such-model", "no-such-model")])
def test_failure_is_one_line_naming_the_field(spec, why):
    with pytest.raises(UsageError) as info:
        load_configured_model(spec, field="real_model", paper="demo", hint="its logits are watermarked")
    msg = str(info.value)
    assert msg.startswith(f"demo: cannot load model {spec!r}") and why in msg and "\n" not in msg
    assert "--set real_model=hf:/path/to/local/weights or openai:" in msg and msg.endswith("its logits are watermarked")
