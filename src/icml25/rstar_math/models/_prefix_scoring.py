"""Private: PPM scoring with shared prefixes (spec §6 cost model: "prefill the prefix once per expansion, then
extend by each child's tokens").

The children of one expansion share their prefix (question + steps so far, ~150-250 tokens) and differ by one
step (~15 tokens). Each unique prefix is encoded once into a KV cache (left-padded batch), its rows are forked
with ``KVCache.select_rows`` to one row per child, and only the step tokens are run on top. Pairs whose
tokenisation is not the concatenation of prefix and step tokens, that would exceed the context, or whose step is
empty are scored the plain way by the caller. The shared path itself is
:func:`icml25.llm.shared_prefix.prefix_hidden_states`.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["split_shareable"]


def split_shareable(tok, prefixes: Sequence[str], steps: Sequence[str], block_size: int
                    ) -> tuple[list[int], dict[str, list[int]], list[list[int]], list[int]]:
    """Which pairs can use the shared path: ``(shared indices, prefix -> ids, step ids per shared pair,
    indices for the plain path)``."""
    pref_ids: dict[str, list[int]] = {}
    shared, step_ids, plain = [], [], []
    for i, (p, s) in enumerate(zip(prefixes, steps)):
        if p not in pref_ids:
            pref_ids[p] = [tok.eot_id, *tok.encode(p)]
        P, S = pref_ids[p], tok.encode(s)
        if S and len(P) + len(S) <= block_size and tok.encode(p + s) == P[1:] + S:
            shared.append(i)
            step_ids.append(S)
        else:
            plain.append(i)
    return shared, pref_ids, step_ids, plain
