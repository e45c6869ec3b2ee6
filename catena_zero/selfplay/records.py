"""Pending self-play positions, their final targets, and symmetry augmentation.

A sample dict holds, batch first (n positions, C cells, A = C + 1 actions):
    planes            float32 [n, P, H, W]   observation, side to move's view
    globals           float32 [n, G]
    policy_target     float32 [n, A]         search policy target (sums to 1)
    value_target      float32 [n, 3]         win/draw/loss, side to move's view: the game's
                                             outcome, optionally blended with the search value
    score_target      float32 [n]            final margin, side to move's view
    ownership_target  float32 [n, C]         final stones: +1 own, -1 opponent, 0 empty
    weight            float32 [n]            loss weight of the position
    legal_mask        bool    [n, A]         legal actions of the position
`to_samples` turns it into `catena_zero.data.Samples` (uint8 planes, int8 ownership).
"""

from __future__ import annotations

import numpy as np

from catena_zero.data import Samples, symmetry_images
from catena_zero.rules import EMPTY, NUM_GLOBALS, NUM_PLANES

SAMPLE_KEYS = ("planes", "globals", "policy_target", "value_target", "score_target",
               "ownership_target", "weight", "legal_mask")


class PositionRecords:
    """Positions recorded during play whose game has not ended yet."""

    def __init__(self, board, search_value_weight: float = 0.0):
        if not 0.0 <= search_value_weight <= 1.0:
            raise ValueError(f"search_value_weight must be in [0, 1], got {search_value_weight}")
        self.board = board
        # The outcome of one game is a noisy label for every position in it; the search's
        # root value is a lower-variance (biased) one. Blending them trains the value head
        # faster early on, when games are few.
        self.search_value_weight = float(search_value_weight)
        self.chunks: list[dict[str, np.ndarray]] = []

    def add(self, planes, globals_, policy_target, legal_mask, to_move, game_ids,
            root_value=None) -> None:
        """Record n positions: planes [n,P,H,W], globals [n,G], policy and legal [n,A],
        to_move and game ids [n], the search's root value [n] in [-1, 1] (mover's view;
        needed when search_value_weight > 0)."""
        count = len(game_ids)
        if root_value is None:
            if self.search_value_weight > 0.0:
                raise ValueError("root_value is needed when search_value_weight > 0")
            root_value = np.zeros(count, dtype=np.float32)
        self.chunks.append({
            "root_value": np.clip(np.asarray(root_value, dtype=np.float32), -1.0, 1.0),
            "planes": np.asarray(planes, dtype=np.uint8),
            "legal_mask": np.asarray(legal_mask, dtype=bool),
            "globals": np.asarray(globals_, dtype=np.float32),
            "policy_target": np.asarray(policy_target, dtype=np.float32),
            "to_move": np.asarray(to_move, dtype=np.int8),
            "game_id": np.asarray(game_ids, dtype=np.int64),
        })

    def __len__(self) -> int:
        return sum(chunk["game_id"].size for chunk in self.chunks)

    def pop_finished(self, game_ids, winner, margin, stones) -> dict:
        """Remove the positions of the finished games and give them their final targets.

        game_ids [k] finished games, winner [k] (EMPTY = draw), margin [k] (Black's view),
        stones [k, C] final colours. Returns a sample dict plus "positions" (the count).
        """
        game_ids = np.asarray(game_ids, dtype=np.int64)
        if not self.chunks:
            return _empty_samples(self.board) | {"positions": 0}
        merged = {key: np.concatenate([c[key] for c in self.chunks]) for key in self.chunks[0]}
        order = np.argsort(game_ids)
        sorted_ids = game_ids[order]
        where = np.searchsorted(sorted_ids, merged["game_id"])
        where = np.minimum(where, sorted_ids.size - 1)
        mine = sorted_ids[where] == merged["game_id"]  # [m] position belongs to a finished game
        keep = {key: value[~mine] for key, value in merged.items()}
        self.chunks = [keep] if keep["game_id"].size else []
        rows = order[where[mine]]  # [n] index into the finished games
        to_move = merged["to_move"][mine].astype(np.int64)  # [n]
        game_winner = np.asarray(winner, dtype=np.int64)[rows]
        outcome = np.where(game_winner == EMPTY, 1, np.where(game_winner == to_move, 0, 2))
        value_target = np.eye(3, dtype=np.float32)[outcome]  # [n, 3]
        if self.search_value_weight > 0.0:
            searched = merged["root_value"][mine]  # [n] win minus loss expectation
            searched_wdl = np.stack([(1 + searched) / 2, np.zeros_like(searched),
                                     (1 - searched) / 2], axis=1)
            weight = self.search_value_weight
            value_target = ((1 - weight) * value_target + weight * searched_wdl).astype(np.float32)
        sign = np.where(to_move == 1, 1.0, -1.0).astype(np.float32)  # Black is colour 1
        score_target = np.asarray(margin, dtype=np.float32)[rows] * sign
        final = np.asarray(stones, dtype=np.int64)[rows]  # [n, C]
        ownership = np.where(final == EMPTY, 0.0,
                             np.where(final == to_move[:, None], 1.0, -1.0)).astype(np.float32)
        count = int(mine.sum())
        return {
            "planes": merged["planes"][mine],
            "globals": merged["globals"][mine],
            "policy_target": merged["policy_target"][mine],
            "value_target": value_target,
            "score_target": score_target,
            "ownership_target": ownership,
            "weight": np.ones(count, dtype=np.float32),
            "legal_mask": merged["legal_mask"][mine],
            "positions": count,
        }


def to_samples(samples: dict):
    """The sample dict as validated `catena_zero.data.Samples`."""
    return Samples.create(**{key: samples[key] for key in SAMPLE_KEYS})


def _empty_samples(board) -> dict:
    cells, actions, size = board.num_cells, board.num_actions, board.grid_size
    return {
        "planes": np.zeros((0, NUM_PLANES, size, size), dtype=np.uint8),
        "globals": np.zeros((0, NUM_GLOBALS), dtype=np.float32),
        "policy_target": np.zeros((0, actions), dtype=np.float32),
        "value_target": np.zeros((0, 3), dtype=np.float32),
        "score_target": np.zeros(0, dtype=np.float32),
        "ownership_target": np.zeros((0, cells), dtype=np.float32),
        "weight": np.zeros(0, dtype=np.float32),
        "legal_mask": np.zeros((0, actions), dtype=bool),
    }


def finalise_records(chunks: list[dict], board) -> dict:
    """Concatenate finished chunks into one sample dict (keys SAMPLE_KEYS)."""
    chunks = [chunk for chunk in chunks if chunk["positions"]]
    if not chunks:
        return _empty_samples(board)
    return {key: np.concatenate([chunk[key] for chunk in chunks]) for key in SAMPLE_KEYS}


def symmetry_augment(samples: Samples, board, copies: int,
                     rng: np.random.Generator) -> Samples:
    """Each position of `samples` (`catena_zero.data.Samples`) under `copies` distinct random
    symmetries of the 12 (k=0 identity), through `catena_zero.data.symmetry_images`."""
    count = len(samples)
    if count == 0:
        return samples
    num_symmetries = np.asarray(board.symmetries).shape[0]
    choice = np.argsort(rng.random((count, num_symmetries)), axis=1)[:, :copies]  # [n, copies]
    rows = np.repeat(np.arange(count), copies)
    return symmetry_images(samples.take(rows), board, choice.reshape(-1))
