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
    """The step-90144 model's atlas (kept as test data) puts side 4 komi/standard at 9.68 in
    [9, 10] for the model file it names: a game against that file is played at komi 10.
    Side 6's bracket is open ([8, open]) and nokomi has no komi: there the network answers."""
    from catena_zero.komi.fair import ATLAS, NETWORK, komi_for_play
    from tests.komi.test_komi_outcome import ATLAS as RECORDED

    player = atlas_model_player()
    choice = komi_for_play(player, Rules(side=4), RECORDED)
    assert (choice.komi, choice.source) == (10, ATLAS)
    assert "crosses one half at 9.68 in [9, 10]" in choice.note
    open_end = komi_for_play(player, Rules(side=6), RECORDED)
    assert open_end.source == NETWORK and open_end.komi == player.choose_komi(Rules(side=6))
    assert komi_for_play(player, Rules(side=4, game_type="nokomi"), RECORDED).komi == 0
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
    """The committed atlas measured side 4 with side4.pt at the default player's search:
    9.07 in [7, 10], so a GTP engine of that file answers 9 and says where it comes from."""
    import io

    import torch

    from catena_zero.play.bundled import BUNDLED_DIRECTORY, ModelLibrary
    from catena_zero.play.gtp import GtpEngine
    from catena_zero.play.gtp_analysis import install_model_commands
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig

    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(BUNDLED_DIRECTORY / "side4.pt"), PlayerConfig())
    notes = io.StringIO()
    engine = GtpEngine(player, rules=Rules(side=4), note_stream=notes)
    install_model_commands(engine, player)
    assert engine.handle_line("catena-choose-komi") == "= 9\n\n"
    assert "catena-zero: komi 9 from the komi atlas" in notes.getvalue()
    assert "crosses one half at 9.07 in [7, 10]" in notes.getvalue()


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


def _atlas_file(path, records: dict) -> str:
    """An atlas file holding side-6 komi/standard records: {name: record fields}."""
    import json

    path.write_text(json.dumps({"format_version": 1, "records": records}))
    return str(path)


def _record(estimate, interval, sha="a" * 64, simulations=None, top_level=False,
            rollout_mix=None) -> dict:
    record = {"status": "measured", "estimate": estimate, "interval": list(interval),
              "games": 100, "model": {"name": "m.pt", "sha256": sha},
              "settings": {"atlas": {} if simulations is None or top_level
                           else {"simulations": simulations}}}
    if top_level:
        record["simulations"] = simulations
    if rollout_mix is not None:
        record["settings"]["search"] = {"num_simulations": 800, "rollout_mix": rollout_mix}
    return {"side6-komi-standard": record}


def test_at_one_strength_the_crossing_of_the_players_own_leaf_values_is_taken(tmp_path):
    """Two records at the player's 128 simulations, one searched with the network's value
    alone (a record from before the setting says nothing: 0) and one with leaf values mixed
    half and half with random playouts: the default player (mix 0.5) gets the mixed one and
    its note says so, a player without the mix the other; a record at another strength
    still loses to both, whatever its mix; without a mix given, the order of the files."""
    import hashlib
    from types import SimpleNamespace

    from catena_zero.komi.fair import ATLAS, atlas_crossing, komi_for_play, record_rollout_mix

    rules = Rules(side=6)
    plain = _atlas_file(tmp_path / "plain.json", _record(12.0, (11, 13), simulations=128))
    mixed = _atlas_file(tmp_path / "mixed.json", _record(9.0, (8, 10), simulations=128,
                                                         rollout_mix=0.5))
    far = _atlas_file(tmp_path / "far.json", _record(5.0, (4, 6), simulations=32,
                                                     rollout_mix=0.5))
    paths = [far, plain, mixed]
    assert atlas_crossing(rules, "a" * 64, paths, 128, 0.5)["estimate"] == 9.0
    assert atlas_crossing(rules, "a" * 64, paths, 128, 0.0)["estimate"] == 12.0
    assert atlas_crossing(rules, "a" * 64, paths, 128)["estimate"] == 12.0
    assert atlas_crossing(rules, "a" * 64, [far, plain], 128, 0.5)["estimate"] == 12.0
    assert record_rollout_mix(atlas_crossing(rules, "a" * 64, [mixed], 128)) == 0.5
    assert record_rollout_mix({"settings": {"search": {"rollout_mix": True}}}) == 0.0

    class Library:
        def get(self, rules):
            return SimpleNamespace(path=model)

    model = tmp_path / "m.pt"
    model.write_bytes(b"a model")
    sha = hashlib.sha256(b"a model").hexdigest()
    plain = _atlas_file(tmp_path / "plain.json", _record(12.0, (11, 13), sha, 128))
    mixed = _atlas_file(tmp_path / "mixed.json", _record(9.0, (8, 10), sha, 128,
                                                         rollout_mix=0.5))
    for mix, komi, note in ((0.5, 9, "128 simulations a move, leaf values 0.5 random playouts)"),
                            (0.0, 12, "(100 games, 128 simulations a move)")):
        player = SimpleNamespace(library=Library(), config=SimpleNamespace(
            simulations=128, rollout_mix=mix))
        choice = komi_for_play(player, rules, [plain, mixed])
        assert (choice.source, choice.komi) == (ATLAS, komi) and note in choice.note
    player = SimpleNamespace(library=Library(), config=SimpleNamespace(simulations=128,
                                                                       rollout_mix=0.25))
    assert "; this player mixes 0.25" in komi_for_play(player, rules, [mixed]).note


def test_the_crossing_measured_nearest_the_players_strength_is_taken(tmp_path):
    """Records at 8, 32 and 128 simulations of one model (the 128 one with an open bracket)
    and one of another model: a player at 100 simulations gets 32 (128 is open), at 16 the
    tie between 8 and 32 (a factor 2 each way) goes to the stronger, at 4 it gets 8, and
    without a strength the strongest closed one."""
    from catena_zero.komi.fair import atlas_crossing, record_simulations

    rules = Rules(side=6)
    paths = [_atlas_file(tmp_path / "8.json", _record(14.0, (13, 15), simulations=8)),
             _atlas_file(tmp_path / "32.json", _record(9.0, (8, 10), simulations=32,
                                                         top_level=True)),
             _atlas_file(tmp_path / "128.json", _record(7.0, (6, None), simulations=128)),
             _atlas_file(tmp_path / "other.json", _record(5.0, (4, 6), sha="b" * 64,
                                                            simulations=100))]
    for simulations, expected in ((100, 9.0), (16, 9.0), (4, 14.0), (None, 9.0)):
        record = atlas_crossing(rules, "a" * 64, paths, simulations)
        assert record["estimate"] == expected, simulations
    assert record_simulations(atlas_crossing(rules, "a" * 64, paths[:1], 128)) == 8
    assert atlas_crossing(rules, "c" * 64, paths, 128) is None  # no record of this model
    assert atlas_crossing(Rules(side=5), "a" * 64, paths, 128) is None  # nor of this side
    assert atlas_crossing(rules, "a" * 64, [tmp_path / "missing.json"], 128) is None


def test_a_record_without_its_strength_is_taken_only_when_nothing_else_is(tmp_path):
    from catena_zero.komi.fair import atlas_crossing

    rules = Rules(side=6)
    unknown = _atlas_file(tmp_path / "unknown.json", _record(12.0, (11, 13)))
    known = _atlas_file(tmp_path / "known.json", _record(9.0, (8, 10), simulations=512))
    assert atlas_crossing(rules, "a" * 64, [unknown, known], 8)["estimate"] == 9.0
    assert atlas_crossing(rules, "a" * 64, [unknown], 8)["estimate"] == 12.0


def test_the_default_player_gets_the_crossing_measured_nearest_its_search():
    """The committed atlas measured komi/standard on sides 2-7 with the model that plays
    each side at the default player's search (128 simulations, leaf values mixed 0.5), the
    strength curve side 8 at up to 32 (without the mix): the default player is given the
    atlas's crossing on sides 2-7 and the curve's 32-simulation one on side 8, and the note
    names the strength and the mix."""
    import json

    from catena_zero.komi.fair import (
        ATLAS,
        ATLAS_PATH,
        CURVE_DIRECTORY,
        _sha256,
        atlas_crossing,
        komi_for_play,
        record_rollout_mix,
        record_simulations,
    )
    from catena_zero.play.bundled import ModelLibrary
    from catena_zero.play.model_player import ModelPlayer, PlayerConfig

    library = ModelLibrary()
    expected = {2: (128, ATLAS_PATH), 3: (128, ATLAS_PATH), 4: (128, ATLAS_PATH),
                5: (128, ATLAS_PATH), 6: (128, ATLAS_PATH), 7: (128, ATLAS_PATH),
                8: (32, CURVE_DIRECTORY / "sims32" / "atlas.json")}
    for side, (simulations, path) in expected.items():
        rules = Rules(side=side)
        record = atlas_crossing(rules, _sha256(library.get(rules).path), simulations=128,
                                rollout_mix=0.5)
        assert record is not None and record_simulations(record) == simulations, side
        assert record_rollout_mix(record) == (0.5 if path == ATLAS_PATH else 0.0), side
        committed = json.loads(path.read_text())["records"][f"side{side}-komi-standard"]
        assert record == committed, side
    rules = Rules(side=6)
    choice = komi_for_play(ModelPlayer(library, PlayerConfig()), rules)
    record = atlas_crossing(rules, _sha256(library.get(rules).path), simulations=128,
                            rollout_mix=0.5)
    assert (choice.source, choice.komi) == (ATLAS, rules.nearest_komi(record["estimate"]))
    assert "(412 games, 128 simulations a move, leaf values 0.5 random playouts)" in choice.note
    eight = komi_for_play(ModelPlayer(library, PlayerConfig()), Rules(side=8))
    assert "32 simulations a move; this player searches 128" in eight.note
