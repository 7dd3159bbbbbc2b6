"""The StepArith domain and the step format: the problem generator, step parsing, answer checking, augmentation, the word tokenizer, the bootstrap solver and the shipped benchmark files."""
