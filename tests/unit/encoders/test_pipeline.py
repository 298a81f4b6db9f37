"""The embedding pipeline's pure parts: batch size per device, length order and padding."""

from __future__ import annotations

import numpy as np

from router.encoders import pipeline, token_batches
from router.encoders.device import Placement


def test_a_cuda_batch_is_sixteen_cpu_batches() -> None:
    assert pipeline.batch_size_for(64, Placement("cpu")) == 64
    assert pipeline.batch_size_for(64, Placement("cuda:0", "fp16")) == 1024
    assert pipeline.batch_size_for(0, Placement("cpu")) == 1


def test_longest_first_and_ties_keep_input_order() -> None:
    order = token_batches.length_order(np.array([3, 5, 3, 1, 5]))
    assert order.tolist() == [1, 4, 0, 2, 3]


def test_padding_right_and_left_with_masks() -> None:
    ids = [[7, 8, 9], [5], [1, 2]]
    lengths = np.array([3, 1, 2])
    rows = np.array([0, 2, 1])
    matrix, mask = token_batches.pad(ids, lengths, rows, pad_id=0)
    assert matrix.tolist() == [[7, 8, 9], [1, 2, 0], [5, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    matrix, mask = token_batches.pad(ids, lengths, rows, pad_id=0, left=True)
    assert matrix.tolist() == [[7, 8, 9], [0, 1, 2], [0, 0, 5]]
    assert mask.tolist() == [[1, 1, 1], [0, 1, 1], [0, 0, 1]]


def test_chunks_cover_every_text_once() -> None:
    assert list(pipeline.chunks(5, 2)) == [(0, 2), (2, 4), (4, 5)]
    assert list(pipeline.chunks(0, 2)) == []
