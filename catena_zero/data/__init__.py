"""catena_zero.data: training samples and versioned shards (numpy only).

Example::

    from catena_zero.data import ReplayWindow, Samples, ShardMeta, read_shard, write_shard
    write_shard(directory / shard_filename(7), samples, ShardMeta(side=4, game_type="komi",
                scoring="standard", model_step=300, num_games=64))
    window = ReplayWindow(directory, window_samples=100_000); window.refresh()
    batch = window.sample_batch(256, np.random.default_rng(0))
"""

from catena_zero.data.padding import PaddedSamples, pad_samples
from catena_zero.data.samples import (
    FIELDS,
    MixedBatch,
    Samples,
    augment_with_symmetries,
    random_symmetries,
    symmetry_images,
    wdl_from_outcome,
)
from catena_zero.data.shards import (
    FORMAT_VERSION,
    ReplayWindow,
    ShardError,
    ShardMeta,
    Track,
    list_shards,
    read_shard,
    read_shard_meta,
    shard_filename,
    write_shard,
)

__all__ = [
    "FIELDS",
    "FORMAT_VERSION",
    "MixedBatch",
    "PaddedSamples",
    "ReplayWindow",
    "Samples",
    "ShardError",
    "ShardMeta",
    "Track",
    "augment_with_symmetries",
    "list_shards",
    "pad_samples",
    "random_symmetries",
    "read_shard",
    "read_shard_meta",
    "shard_filename",
    "symmetry_images",
    "wdl_from_outcome",
    "write_shard",
]
