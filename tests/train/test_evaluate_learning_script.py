"""scripts/evaluate_learning.py: search overrides are typed, checked and named on error."""

from __future__ import annotations

import pytest

from catena_zero.mcts import SearchConfig
from tests.script_loader import load_script


def test_search_overrides_take_the_field_types() -> None:
    script = load_script("evaluate_learning")
    base = SearchConfig()
    values = script.parse_overrides(
        ["algorithm=puct", "max_considered_actions=8", "c_scale=0.5", "tree_reuse=true"], base)
    assert values == {"algorithm": "puct", "max_considered_actions": 8, "c_scale": 0.5,
                      "tree_reuse": True}


@pytest.mark.parametrize("item, message", [
    ("bogus=1", "bogus=1"),
    ("max_considered_actions", "KEY=VALUE"),
    ("tree_reuse=maybe", "tree_reuse"),
    ("num_simulations=many", "many"),
])
def test_bad_search_overrides_are_named(item: str, message: str) -> None:
    script = load_script("evaluate_learning")
    with pytest.raises(ValueError, match=message):
        script.parse_overrides([item], SearchConfig())
