"""Search: the tree and its statistics, step-level MCTS, step beam search, the shared step expansion, sharding, the policy/scorer protocols."""
