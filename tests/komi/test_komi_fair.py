"""The self-play fair komi: a search's balance against itself, one sweep over the komi range."""

from __future__ import annotations

import numpy as np

from catena_zero.komi.exact import solver_for
from catena_zero.komi.fair import SelfPlayBalance, selfplay_fair_komi
from catena_zero.komi.solver_agent import SolverEvaluator
from catena_zero.mcts import SearchConfig, UniformEvaluator
from catena_zero.rules import Rules


def test_a_search_on_exact_values_balances_at_the_exact_fair_komi() -> None:
    """Side 2: with the solver's values the search plays perfectly, Black wins exactly below
    the exact fair komi (2.5), and the fit's crossing is that gap's midpoint."""
    rules = Rules(side=2)
    balance = selfplay_fair_komi(rules, SolverEvaluator(rules), SearchConfig(num_simulations=8),
                                 games_per_komi=2, seed=0)
    exact = solver_for(rules).value()
    assert balance.fair_komi == exact
    assert balance.black_score == {komi: float(komi < exact) for komi in range(16)}
    assert balance.low < exact < balance.high


def test_the_report_covers_the_whole_range_and_stays_inside_it() -> None:
    rules = Rules(side=2)
    balance = selfplay_fair_komi(rules, UniformEvaluator(rules.board.num_actions),
                                 SearchConfig(num_simulations=2, gumbel_scale=0.0), 3, seed=1)
    assert isinstance(balance, SelfPlayBalance)
    assert sorted(balance.black_score) == list(range(16)) and balance.games_per_komi == 3
    assert 0.0 <= balance.fair_komi <= 15.0 and np.isfinite(balance.slope)
    assert set(balance.to_dict()) == {"fair_komi", "low", "high", "slope", "games_per_komi",
                                      "black_score"}


def atlas_model_player(simulations: int = 8):
    """A player of the model file the committed atlas was measured with."""
    import torch

    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig
    from tests.komi.test_komi_outcome import atlas_model_path

    torch.set_num_threads(1)
    return ModelPlayer(ModelLibrary(atlas_model_path()), PlayerConfig(simulations=simulations))


def test_play_takes_the_atlas_crossing_for_the_same_model_and_a_closed_bracket(tmp_path):
    """The committed atlas puts side 4 komi/standard at 9.68 in [9, 10] for the model file it
    names: a game against that file is played at komi 10. Side 6's bracket is open ([8,
    open]) and nokomi has no komi: there the network answers."""
    from catena_zero.komi.fair import ATLAS, NETWORK, komi_for_play

    player = atlas_model_player()
    choice = komi_for_play(player, Rules(side=4))
    assert (choice.komi, choice.source) == (10, ATLAS)
    assert "crosses one half at 9.68 in [9, 10]" in choice.note
    open_end = komi_for_play(player, Rules(side=6))
    assert open_end.source == NETWORK and open_end.komi == player.choose_komi(Rules(side=6))
    assert komi_for_play(player, Rules(side=4, game_type="nokomi")).komi == 0
    # no atlas, or a damaged one: the network
    (tmp_path / "bad.json").write_text("{not json")
    for path in (tmp_path / "missing.json", tmp_path / "bad.json"):
        assert komi_for_play(player, Rules(side=4), path).source == NETWORK


def test_another_model_file_is_not_given_the_atlas_of_this_one():
    import torch

    from catena_zero.komi.fair import NETWORK, komi_for_play
    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig
    from tests.export.tiny_model import tiny_model_file

    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(4)), PlayerConfig(simulations=8))
    choice = komi_for_play(player, Rules(side=4))
    assert choice.source == NETWORK and choice.komi == player.choose_komi(Rules(side=4))
    assert choice.note == f"komi {choice.komi} from the network's own estimate"


def test_gtp_answers_the_komi_and_names_its_source_on_stderr():
    import io

    from catena_zero.play.gtp import GtpEngine
    from catena_zero.play.gtp_analysis import install_model_commands

    player = atlas_model_player()
    notes = io.StringIO()
    engine = GtpEngine(player, rules=Rules(side=4), note_stream=notes)
    install_model_commands(engine, player)
    assert engine.handle_line("catena-choose-komi") == "= 10\n\n"
    assert "catena-zero: komi 10 from the komi atlas" in notes.getvalue()


def test_a_bundled_file_rewritten_with_the_same_weights_keeps_its_atlas_crossing():
    """The bundled general-step90144.pt plays 4/komi/quadratic and is the file the committed
    atlas measured (under its SHA-256 before the bundled files lost their torch.export
    program, weights unchanged): a game there is still played at the atlas's komi."""
    import torch

    from catena_zero.komi.fair import ATLAS, komi_for_play
    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig

    torch.set_num_threads(1)
    rules = Rules(side=4, scoring="quadratic")
    library = ModelLibrary()
    assert library.choice(rules) == "general-step90144.pt"
    choice = komi_for_play(ModelPlayer(library, PlayerConfig(simulations=8)), rules)
    assert (choice.komi, choice.source) == (176, ATLAS)
    assert "crosses one half at 176.00 in [105, 226]" in choice.note
