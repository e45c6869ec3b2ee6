"""catena_zero.komi: komi balance. `solver` / `exact`: exact minimax of small boards and the
exact fair komi; `estimate`: the agent's own bisection estimate; `sweep`: empirical
self-play sweeps and the logistic fit; `opening`: nokomi opening-stone balance; `plots`,
`tables`: PNG and CSV output; `analysis`: the `catena-zero komi` pipeline; `atlas`: the komi
atlas, every side and variant measured with one model (`catena-zero komi atlas`)."""
