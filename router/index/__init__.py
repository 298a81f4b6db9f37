"""The index: ``build`` (the one pipeline: discover, build, prune), ``store`` (write and load a
version), ``layout`` (CURRENT, the listing of versions, checksums), ``recovery``,
``retention``, ``dense`` (FAISS), ``lexical`` (BM25), ``vectors`` (skill embeddings, reused
across builds), ``query_encoder`` (the query encoder of an index folder) and ``fine_tune/``
(encoder fine-tuning of a version). The encoders themselves are ``router.encoders``."""
