"""Network configuration (registered with Hydra by `catena_zero.cli`).

Example::

    from catena_zero.network.config import NetworkConfig
    config = NetworkConfig(blocks=4, channels=32)   # the side4 preset net
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

NORMALISATIONS = ("batch", "none")


@dataclass
class NetworkConfig:
    blocks: int = 6  # residual blocks in the trunk
    channels: int = 64  # feature channels of the trunk
    global_pool_every: int = 2  # blocks k, 2k, ... are global pooling bias blocks; 0 = none
    global_pool_channels: int = 16  # trunk channels pooled to make the bias in a pooling block
    policy_head_channels: int = 16  # 1x1 conv channels of the policy head (and as many pooled ones)
    value_head_channels: int = 16  # 1x1 conv channels of the value/score/ownership head
    value_hidden: int = 64  # hidden units of the value/score MLP after global pooling
    normalisation: str = "batch"  # "batch" (masked batch norm over on-board cells) or "none"
    score_scale: float = 10.0  # score head outputs raw * score_scale margin points
    stem_kernel: int = 3  # stem conv kernel: 3 (one hex ring) or 5 (two hex rings)
    score_belief_bins: int = 0  # bins of the final-margin distribution head (KataGo); 0 = none
    score_belief_range: float = 40.0  # the bins' centres span [-range, range] margin points

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        positive = (
            "blocks", "channels", "global_pool_channels", "policy_head_channels",
            "value_head_channels", "value_hidden",
        )
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"NetworkConfig.{name} must be a positive int, got {value!r}")
        if not isinstance(self.global_pool_every, int) or self.global_pool_every < 0:
            raise ValueError(
                "NetworkConfig.global_pool_every must be an int >= 0,"
                f" got {self.global_pool_every!r}"
            )
        if self.global_pool_every and self.global_pool_channels >= self.channels:
            raise ValueError(
                f"NetworkConfig.global_pool_channels ({self.global_pool_channels}) must be smaller"
                f" than channels ({self.channels})"
            )
        if self.normalisation not in NORMALISATIONS:
            raise ValueError(
                f"NetworkConfig.normalisation must be one of {NORMALISATIONS},"
                f" got {self.normalisation!r}"
            )
        if not self.score_scale > 0:
            raise ValueError(f"NetworkConfig.score_scale must be > 0, got {self.score_scale!r}")
        bins = self.score_belief_bins
        if not isinstance(bins, int) or isinstance(bins, bool) or bins < 0 or bins == 1:
            raise ValueError("NetworkConfig.score_belief_bins must be 0 (no head) or an int >= 2,"
                             f" got {self.score_belief_bins!r}")
        if not self.score_belief_range > 0:
            raise ValueError(
                f"NetworkConfig.score_belief_range must be > 0, got {self.score_belief_range!r}")
        if self.stem_kernel not in (3, 5):
            raise ValueError(f"NetworkConfig.stem_kernel must be 3 or 5, got {self.stem_kernel!r}")

    def score_belief_centres(self) -> list[float]:
        """Margin points at the centres of the score-belief bins (empty without the head)."""
        bins, span = self.score_belief_bins, self.score_belief_range
        return [-span + 2.0 * span * index / (bins - 1) for index in range(bins)] if bins else []

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> NetworkConfig:
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown NetworkConfig key(s): {', '.join(unknown)}")
        return cls(**values)
