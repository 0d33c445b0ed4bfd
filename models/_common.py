"""Helpers shared by the benchmark programs: size checking, seeded weights and seeded inputs.

The benchmark programs themselves stay close to the code their authors wrote; what is common to
all of them (which sizes exist, how randomness is pinned down) lives here so that every model
answers a bad size or a bad dynamic kind the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

SIZES = ("paper", "smoke")

#: Batch sizes of the ``model-bs`` experiments (paper §8.5: uniform in [2, 16]).
BS_RANGE = (2, 16)
#: Sequence lengths of the ``model-seqlen`` experiments (paper §8.5: batch 8, length in [32, 256]).
SEQLEN_RANGE = (32, 256)
SEQLEN_BATCH = 8


def check_size(size: str) -> str:
    """Return ``size`` if it is one of :data:`SIZES`, else raise a ValueError naming the valid ones."""
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; valid sizes: {', '.join(SIZES)}")
    return size


def check_batch_size(batch_size: int) -> int:
    """Return ``batch_size`` if it is a positive int, else raise a ValueError."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    return batch_size


def check_kind(kind: str, valid: tuple[str, ...], model: str) -> str:
    """Return ``kind`` if ``model`` supports that dynamic-input kind, else raise a ValueError."""
    if kind not in valid:
        raise ValueError(f"model {model!r} has no dynamic inputs of kind {kind!r}; valid kinds: {', '.join(valid)}")
    return kind


def check_count(n: int) -> int:
    """Return ``n`` if it is a positive int (the number of dynamic inputs to make)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (number of dynamic inputs) must be a positive int, got {n!r}")
    return n


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the block with torch's global RNG seeded to ``seed``, restoring the caller's RNG after.

    Model constructors draw their initial weights from the global RNG (``nn.init``), so seeding it
    is the only way to pin them; forking keeps the caller's own random stream untouched.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def generator(seed: int) -> torch.Generator:
    """A CPU generator seeded with ``seed``, for drawing example inputs."""
    return torch.Generator().manual_seed(seed)


def uniform_ints(gen: torch.Generator, low: int, high: int, n: int) -> list[int]:
    """``n`` ints drawn uniformly from the closed range [low, high] with ``gen``."""
    return torch.randint(low, high + 1, (n,), generator=gen).tolist()


def text_input(batch_size: int, seq_len: int, vocab_size: int, seed: int) -> tuple[list, dict]:
    """``([input_ids [BS, L]], {"attention_mask": ones [BS, L]})`` with ids drawn from ``seed``."""
    check_batch_size(batch_size)
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive int, got {seq_len!r}")
    input_ids = torch.randint(0, vocab_size, (batch_size, seq_len), generator=generator(seed))
    attention_mask = torch.ones(batch_size, seq_len, dtype=torch.long)
    return [input_ids], {"attention_mask": attention_mask}


def check_range(value, what: str) -> tuple[int, int]:
    """``(low, high)`` of a stream's range given as two ints with 1 <= low <= high, else a
    ValueError naming ``what``."""
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(type(v) is int for v in value) \
            or not 1 <= value[0] <= value[1]:
        raise ValueError(f"{what} must be two integers [low, high] with 1 <= low <= high, got {value!r}")
    return int(value[0]), int(value[1])


def dynamic_text_inputs(get_input, model: str, batch_size: int, n: int, size: str, kind: str,
                        seed: int, bs_range=BS_RANGE, seqlen_range=SEQLEN_RANGE) -> list[tuple[list, dict]]:
    """Inputs of the ``-bs`` and ``-seqlen`` experiments for a text model whose ``get_input`` takes
    ``seq_len=``: batch size uniform in ``bs_range`` (:data:`BS_RANGE`), or length uniform in
    ``seqlen_range`` (:data:`SEQLEN_RANGE`) at batch ``batch_size``."""
    check_kind(kind, ("bs", "seqlen"), model)
    check_count(n)
    gen = generator(seed)
    if kind == "bs":
        return [get_input(bs, size, seed=seed + 1 + i)
                for i, bs in enumerate(uniform_ints(gen, *check_range(bs_range, "bs_range"), n))]
    return [get_input(batch_size, size, seed=seed + 1 + i, seq_len=length)
            for i, length in enumerate(uniform_ints(gen, *check_range(seqlen_range, "seqlen_range"), n))]
