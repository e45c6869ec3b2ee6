"""ModelPlayer: search moves, analysis, komi and colour choice, model/side checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from catena_zero.export.model_file import ModelFileError
from catena_zero.play.bundled import ModelLibrary, bundled_model_path
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.rules import BLACK, WHITE, Game, Rules
from tests.export.tiny_model import tiny_model_file


@pytest.fixture(scope="module")
def player() -> ModelPlayer:
    torch.set_num_threads(1)
    return ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=8))


def test_genmove_is_legal_and_repeatable(player: ModelPlayer) -> None:
    game = Game(Rules(side=3))
    game.play("C3")
    first = player.genmove(game)
    assert first in game.legal_actions()
    again = ModelPlayer(player.library, PlayerConfig(simulations=8)).genmove(game)
    assert again == first


def test_exact_endgames_keep_a_won_endgame(player: ModelPlayer) -> None:
    """With exact endgames on, the player keeps every exactly won endgame it is given."""
    from catena_zero.mcts.endgame import ExactEndgame

    exact = ModelPlayer(player.library, PlayerConfig(simulations=16, exact_endgame_cells=19))
    assert exact.config.search_config().exact_endgame_cells == 19
    rules = Rules(side=3)
    endgame = ExactEndgame(rules)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(12):
        game = Game(rules, komi=3)
        for _ in range(4):
            game.play(game.legal_actions()[int(rng.integers(len(game.legal_actions())))])
        if game.is_over:
            continue
        value, _ = endgame.mover_values(game.state, np.array([0]))
        if value[0] <= 0:
            continue
        mover = game.to_move
        game.play(exact.genmove(game))
        if game.is_over:
            assert game.result()[0] == mover
        else:
            after, _ = endgame.mover_values(game.state, np.array([0]))
            assert (after[0] if game.to_move == mover else -after[0]) == 1.0
        checked += 1
    assert checked > 0
    with pytest.raises(ValueError, match="exact_endgame_cells"):
        PlayerConfig(exact_endgame_cells=-1)


def test_analysis_fields(player: ModelPlayer) -> None:
    game = Game(Rules(side=3), komi=4)
    analysis = player.analyze(game, simulations=16, top=4)
    assert analysis.to_move == BLACK and 0.0 <= analysis.winrate <= 1.0
    assert len(analysis.moves) == 4 and analysis.ownership_black.shape == (19,)
    visits = [move.visits for move in analysis.moves]
    assert visits == sorted(visits, reverse=True) and sum(visits) <= 16
    legal = set(game.legal_actions())
    assert all(move.action in legal and 0.0 <= move.prior <= 1.0 for move in analysis.moves)
    assert np.all(np.abs(analysis.ownership_black) <= 1.0)
    # Black's ownership is minus White's: the same network seen from the other side.
    evaluation = player.evaluate(game)
    np.testing.assert_allclose(evaluation.ownership_black, analysis.ownership_black, atol=1e-6)


def test_choose_komi_is_the_most_balanced(player: ModelPlayer) -> None:
    rules = Rules(side=3)
    komis, values = player.komi_values(rules)
    assert komis.tolist() == list(range(16)) and values.shape == (16,)
    network_only = ModelPlayer(player.library, PlayerConfig(simulations=8, komi_refine=0))
    assert network_only.choose_komi(rules) == int(komis[np.argmin(np.abs(values))])
    refined = player.choose_komi(rules)
    assert refined in komis[np.argsort(np.abs(values), kind="stable")[:3]]
    assert player.choose_komi(Rules(side=3, game_type="double")) == 0


def test_choose_colour_follows_the_search_value(player: ModelPlayer) -> None:
    game = Game(Rules(side=3), komi=0)
    colour = player.choose_colour(game)
    root = player._search(game.rules, game.state).root_value[0]
    assert colour == (BLACK if root >= 0 else WHITE)
    game.play("C3")
    with pytest.raises(ValueError, match="before the first move"):
        player.choose_colour(game)
    nokomi = Game(Rules(side=3, game_type="nokomi"))
    with pytest.raises(ValueError, match="right after the opening stone"):
        player.choose_colour(nokomi)
    nokomi.play("C3")
    assert player.choose_colour(nokomi) in (BLACK, WHITE)
    with pytest.raises(ValueError, match="double"):
        player.choose_colour(Game(Rules(side=3, game_type="double")))


def test_evaluate_a_finished_game_gives_the_result(player: ModelPlayer) -> None:
    game = Game(Rules(side=3))
    rng = np.random.default_rng(3)
    while not game.is_over:
        game.play(int(rng.choice(game.legal_actions())))
    evaluation = player.evaluate(game)
    winner, margin = game.result()
    assert evaluation.winrate_black == (1.0 if winner == BLACK else 0.0)
    assert evaluation.score_lead_black == margin
    with pytest.raises(ValueError, match="over"):
        player.genmove(game)


def test_other_sides_play_and_missing_models_are_refused(player: ModelPlayer,
                                                         tmp_path) -> None:
    # A side-3 model plays side 4 (its weights have no grid-dependent tensor), with a note.
    game = Game(Rules(side=4))
    assert player.genmove(game) in game.legal_actions()
    assert "4/komi/standard is outside the training" in player.track_note(Rules(side=4))
    assert player.track_note(Rules(side=3)) is None
    with pytest.raises(ModelFileError, match="does not exist"):
        ModelLibrary(tmp_path / "none.pt")
    with pytest.raises(ValueError, match="side"):
        bundled_model_path(11)
    with pytest.raises(ValueError, match="algorithm"):
        PlayerConfig(algorithm="minimax")


def test_bundled_champions_are_found_by_side(monkeypatch, tmp_path) -> None:
    import shutil

    from catena_zero.play import bundled

    monkeypatch.setattr(bundled, "BUNDLED_DIRECTORY", tmp_path)
    assert bundled.bundled_sides() == []
    with pytest.raises(ModelFileError, match="no bundled champion for side 3"):
        ModelLibrary().get(3)
    shutil.copy(tiny_model_file(3), tmp_path / "side3.pt")
    library = ModelLibrary()
    assert bundled.bundled_sides() == [3] and library.sides() == [3]
    assert bundled.default_side(library) == 3 and bundled.default_side(None, preferred=3) == 3
    assert library.get(3) is library.get(3)  # loaded once
    assert "side 3 komi/standard model" in library.describe(3)
    (tmp_path / "side4.pt").write_bytes(b"broken")
    with pytest.raises(ModelFileError, match="truncated or not a model"):
        library.get(4)


def test_shipped_champions_load_and_are_small() -> None:
    from catena_zero.play.bundled import bundled_sides

    for side in bundled_sides():
        path = bundled_model_path(side)
        assert path.stat().st_size < 5 * 1024 * 1024
        meta = ModelLibrary(path).get(side).metadata
        assert (meta.side, meta.game_type, meta.scoring) == (side, "komi", "standard")
        assert meta.training_steps and meta.training_steps > 0, "a champion must be trained"
