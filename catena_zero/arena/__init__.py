"""catena_zero.arena: evaluation of agents and checkpoints.

    agents    Agent protocol, RandomAgent, GreedyAgent, UCTAgent, SearchAgent
    specs     agents from spec strings ("random", "greedy", "uct:200", "checkpoint:PATH",
              "champion")
    match     play_match: batched matches, colours alternating per pair of games, distinct
              seeded openings, W/D/L per colour, Wilson intervals, per-game records
    stats     scores (draws as half), Wilson intervals, logistic Elo
    sprt      GSPRT on Elo bounds with draws
    registry  champion registry per track (side, game type, scoring): atomic, locked JSON
    gating    gate a checkpoint against its track's champion; make_gating_callback,
              make_training_gate
    gate_result  what a gate decided: GateResult (one track), MixGateResult (a mix)
    training_gate  TrainingGate: each due checkpoint of a run gated once, across crashes
    elo       Bradley-Terry Elo fit anchored at random = 0; CSV, PNG, TensorBoard
    ladder    round-robin / sampled ladder of a run's checkpoints and baselines
    report    text tables of the results
    config    ArenaConfig, GateConfig, LadderConfig
"""
