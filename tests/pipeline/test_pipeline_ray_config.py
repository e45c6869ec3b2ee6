"""RayConfig: validation and the automatic placement of self-play actors (no Ray needed)."""

from __future__ import annotations

import pytest

from catena_zero.pipeline.ray import RayConfig


@pytest.mark.parametrize(("cpus", "actors", "cpus_per_actor"), [
    (2.0, 2, 0.5),   # the 2-core dev box: two actors beside the learner
    (8.0, 8, 0.875),
    (64.0, 64, 63 / 64),
    (1.0, 1, 0.0),   # nothing left beside the learner: Ray runs the actor unreserved
])
def test_automatic_placement_puts_an_actor_on_every_cpu(cpus, actors, cpus_per_actor):
    assert RayConfig().placement(cpus) == (actors, pytest.approx(cpus_per_actor))


def test_explicit_placement_wins():
    assert RayConfig(num_selfplay_actors=3).placement(8.0) == (3, 1.0)  # capped at one CPU
    assert RayConfig(num_selfplay_actors=4).placement(3.0) == (4, 0.5)
    assert RayConfig(cpus_per_actor=2.0).placement(8.0) == (3, 2.0)  # as many as fit
    assert RayConfig(cpus_per_actor=1.0).placement(2.0) == (1, 1.0)
    assert RayConfig(cpus_per_actor=0.5).placement(2.0) == (2, 0.5)
    assert RayConfig(num_selfplay_actors=2, cpus_per_actor=0.25).placement(16.0) == (2, 0.25)


def test_unknown_cluster_size_falls_back_to_this_machine(monkeypatch):
    monkeypatch.setattr("catena_zero.pipeline.ray.config.os.cpu_count", lambda: 4)
    assert RayConfig().placement(0.0) == (4, 0.75)


@pytest.mark.parametrize(("field", "value"), [
    ("num_selfplay_actors", -1), ("cpus_per_actor", -0.5), ("learner_gpus", -1.0),
    ("max_actor_restarts", -2), ("max_task_failures", -1),
])
def test_bad_values_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        RayConfig(**{field: value})
