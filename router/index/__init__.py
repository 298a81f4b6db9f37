"""The index: ``build`` (the one pipeline: discover, build, prune), ``store`` (write and load a
version), ``layout`` (CURRENT, versions, checksums), ``retention``, ``dense`` (FAISS),
``lexical`` (BM25), ``vectors`` (skill embeddings, reused across builds), ``encoders/``."""
