"""Encoder fine-tuning of an index version, in one place: ``stage`` (the build stage: decide,
reuse, train, adopt, place), ``judge`` (training pairs, the held-out fold, the fine-tune hash
and the adoption rule), ``candidates`` (the candidate runs) and ``negatives`` (hard
negatives). The fine-tuned encoder's ``encoder/`` folder in a version (its model id, its
checksums, finding an intact copy) is ``router.index.versions.encoder``; the training loop
itself is an encoder concern (``router.encoders.training``). Import from the modules; this
package imports none of them, so torch loads only when a model is trained."""
