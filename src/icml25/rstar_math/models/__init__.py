"""The models: the tiny policy and its base pre-training, SFT, the process preference model, the ablation heads, trainable backends (TinyGPT, LoRA) and real-LLM policies."""
