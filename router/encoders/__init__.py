"""Text encoders behind one protocol (``base.Embedder``): sentence-transformers on torch
(``sentence``), an ONNX export of the same weights (``onnx``, checked by ``export_integrity``)
and its int8 copy, and a hashing embedder for tests (``hashing``); ``backends`` registers the
backends by name (``index.query_backend``: what each loads), ``factory`` makes one,
``cache`` remembers query embeddings, ``device`` resolves a build's device and precision,
``pipeline`` batches a build's texts on that device, ``training`` fine-tunes a model on pairs,
``model_folder`` reads a local model's layout. Nothing here knows an index folder: this package
imports nothing from ``router.index`` (the query encoder of a version is
``router.index.query_encoder``). Import from the modules; this package imports none of them, so
the heavy backends load only when used."""
