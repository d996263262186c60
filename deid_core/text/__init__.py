"""Text analysis primitives: tokenization, sentences, sections."""
