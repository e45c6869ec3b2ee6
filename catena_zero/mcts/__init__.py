"""catena_zero.mcts: batched MCTS (PUCT, Gumbel AlphaZero, UCT) over the rules engine.

The network reaches the search only as an `EvaluateFn(states) -> Evaluation`.
"""

from catena_zero.mcts.batched import SearchOutput
from catena_zero.mcts.config import SearchConfig
from catena_zero.mcts.evaluation import EvaluateFn, Evaluation, UniformEvaluator
from catena_zero.mcts.policy import masked_softmax, sample_actions
from catena_zero.mcts.rollout import RolloutEvaluator
from catena_zero.mcts.search import search
from catena_zero.mcts.single_game import SingleGameOutput, single_game_search
from catena_zero.mcts.tree import NO_PARENT, ROOT_INDEX, UNVISITED, Tree

__all__ = [
    "SearchConfig",
    "EvaluateFn",
    "Evaluation",
    "UniformEvaluator",
    "RolloutEvaluator",
    "SearchOutput",
    "search",
    "masked_softmax",
    "sample_actions",
    "SingleGameOutput",
    "single_game_search",
    "Tree",
    "UNVISITED",
    "NO_PARENT",
    "ROOT_INDEX",
]
