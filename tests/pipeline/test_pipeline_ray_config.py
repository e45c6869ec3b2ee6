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


def test_a_local_run_listens_on_loopback_only_and_sends_no_usage_statistics(monkeypatch):
    """What `connect` hands to Ray for a local run, without starting Ray."""
    cluster = pytest.importorskip("catena_zero.pipeline.ray.cluster")
    from ray._private import ray_constants

    for name in cluster.LOCAL_ENVIRONMENT:  # unset now, and as it was after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", True)  # Linux's import-time value
    calls = []
    monkeypatch.setattr(cluster.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(cluster.ray, "init", lambda **options: calls.append(options))
    cluster.connect(RayConfig())
    (options,) = calls
    assert options["_node_ip_address"] == "127.0.0.1" and options["dashboard_host"] == "127.0.0.1"
    assert options["include_dashboard"] is False and "address" not in options
    assert cluster.os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert cluster.os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
    assert ray_constants.ENABLE_RAY_CLUSTER is False  # the switch Ray read at import follows
    # A cluster is joined as it is: its own settings, no local ones.
    assert cluster.init_options(RayConfig(address="10.0.0.5:6379")) == {
        "address": "10.0.0.5:6379", "namespace": "catena_zero", "log_to_driver": False}
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "1")  # an exported choice wins
    assert cluster.local_environment()["RAY_USAGE_STATS_ENABLED"] == "1"


class _Lines:
    """A logging handler that keeps the messages it is handed."""

    def __init__(self) -> None:
        import logging

        self.messages: list[str] = []
        self.handler = logging.Handler()
        self.handler.emit = lambda record: self.messages.append(record.getMessage())


def test_a_local_run_drops_rays_token_notice_and_nothing_else(monkeypatch):
    """Ray's own notice functions, called where ray.init calls them, without starting Ray."""
    cluster = pytest.importorskip("catena_zero.pipeline.ray.cluster")
    import logging

    from ray._private import ray_constants
    from ray._private.authentication import authentication_token_setup as token_setup

    for name in cluster.LOCAL_ENVIRONMENT:  # as they were, after the test
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setattr(ray_constants, "ENABLE_RAY_CLUSTER", ray_constants.ENABLE_RAY_CLUSTER)
    logger = logging.getLogger(cluster.TOKEN_NOTICE_LOGGER)
    assert logger is token_setup.logger  # the logger Ray writes the notice to
    lines = _Lines()
    logger.addHandler(lines.handler)

    def init(**options) -> None:  # what ray.init logs through that logger
        token_setup._warn_token_auth_enabled()  # a new local cluster: auth turned on
        token_setup._warn_token_auth_disabled()  # a real security warning
        logger.warning("another warning")

    monkeypatch.setattr(cluster.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(cluster.ray, "init", init)
    try:
        cluster.connect(RayConfig())
        local = list(lines.messages)
        lines.messages.clear()
        cluster.connect(RayConfig(address="10.0.0.5:6379"))  # a cluster: as Ray has it
        joined = list(lines.messages)
        lines.messages.clear()
        token_setup._warn_token_auth_enabled()  # after ray.init: the filter is gone
    finally:
        logger.removeHandler(lines.handler)
    assert len(local) == 2 and local[0].startswith("Token authentication is disabled")
    assert local[1] == "another warning"
    assert len(joined) == 3 and joined[0].startswith(cluster.TOKEN_NOTICE)
    assert lines.messages[0].startswith(cluster.TOKEN_NOTICE)


def _listening_addresses(root_pid: int) -> list[str]:
    """Local addresses of the TCP sockets that `root_pid` and its descendants listen on."""
    from pathlib import Path

    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    family = {root_pid}
    while True:
        grown = family | {pid for pid, parent in parents.items() if parent in family}
        if grown == family:
            break
        family = grown
    inodes = set()
    for pid in family:
        for descriptor in Path(f"/proc/{pid}/fd").glob("*"):
            try:
                target = descriptor.readlink().as_posix()
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    addresses = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # LISTEN
                addresses.append(parts[1].split(":")[0])
    return addresses


@pytest.mark.slow  # starts a local Ray: ~15 s on a loaded 2-core box
def test_a_local_ray_started_by_connect_listens_on_loopback_only(tmp_path):
    pytest.importorskip("ray")
    import os
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = textwrap.dedent("""
        import json, os, sys
        import ray
        from catena_zero.pipeline.ray import RayConfig
        from catena_zero.pipeline.ray.cluster import connect
        connect(RayConfig())
        ray.get(ray.remote(lambda: 1).remote())
        sys.path.insert(0, os.environ["TESTS_DIR"])
        from test_pipeline_ray_config import _listening_addresses
        print(json.dumps(_listening_addresses(os.getpid())))
        ray.shutdown()
    """)
    repo = Path(__file__).resolve().parents[2]
    environment = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    environment.update(PYTHONPATH=str(repo), TESTS_DIR=str(Path(__file__).parent))
    completed = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "Token authentication" not in completed.stderr  # Ray's notice to a local run
    import json

    addresses = json.loads(completed.stdout.strip().splitlines()[-1])
    loopback = {"0100007F", "0000000000000000FFFF00000100007F", "00000000000000000000000001000000"}
    assert addresses and set(addresses) <= loopback, addresses
