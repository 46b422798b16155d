"""Relevance by meaning (SPEC §5): embedders, the embedded text, the pure hybrid ranking,
the per-fact embeddings kept current in the background, and the store's index."""
