"""Text encoders behind one protocol (``base.Embedder``): sentence-transformers on torch
(``sentence``), an ONNX export of the same weights (``onnx``), and a hashing embedder for tests
(``hashing``); ``factory`` picks one, ``cache`` remembers query embeddings. Import from the
modules; this package imports none of them, so the heavy backends load only when used."""
