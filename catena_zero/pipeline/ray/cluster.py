"""How the Ray runtime reaches Ray: starts it on this machine, or joins a cluster.

A local run (`RayConfig.address` unset) starts Ray listening on loopback only, with no usage
statistics, and without Ray's notice that it turned token authentication on; a cluster
(`address`) is joined as Ray has it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

import ray

from catena_zero.pipeline.ray.config import RayConfig

# Ray's own single-machine settings for a local run (`address=None`), set before ray.init
# unless exported already (an exported value wins). Checked on Ray 2.60 with `ss -ltnp`:
# without them the GCS, the raylet and every worker listen on all interfaces.
LOCAL_ENVIRONMENT = {
    # No usage statistics leave the machine (release wheels also turn them off in ray.init;
    # nightly wheels ask instead).
    "RAY_USAGE_STATS_ENABLED": "0",
    # The mode Ray uses on macOS and Windows: the node's address is 127.0.0.1, so every Ray
    # process listens on loopback only. `_node_ip_address="127.0.0.1"` alone is not enough:
    # on Linux ray.init resolves a loopback address to the machine's outward one.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
# Token authentication stays as Ray sets it for a new local cluster: on, with a token Ray
# makes and reads itself (RAY_AUTH_MODE exported after Ray is imported reaches the Python side
# only, and the cluster then refuses its own driver). Ray announces that with a warning line
# although it asks nothing of the user (authentication on is the safe state; the line only
# says how to opt out), so that one line is dropped from the logger that writes it while
# ray.init starts a local cluster. Every other line passes, Ray's warning that a cluster runs
# *without* authentication among them; joining a cluster (`address`) is left as Ray has it.
TOKEN_NOTICE = "Token authentication is enabled for this Ray cluster"
TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"
LOOPBACK = "127.0.0.1"


class _DropTokenNotice(logging.Filter):
    """Drops Ray's notice that it turned token authentication on; passes everything else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(TOKEN_NOTICE)


@contextlib.contextmanager
def token_notice_dropped() -> Iterator[None]:
    """Within the block, Ray's token-authentication notice is not logged (see TOKEN_NOTICE)."""
    logger = logging.getLogger(TOKEN_NOTICE_LOGGER)
    notice_filter = _DropTokenNotice()
    logger.addFilter(notice_filter)
    try:
        yield
    finally:
        logger.removeFilter(notice_filter)


def init_options(config: RayConfig) -> dict[str, Any]:
    """The keyword arguments `connect` passes to ray.init (nothing is started here)."""
    options: dict[str, Any] = {"namespace": config.namespace,
                               "log_to_driver": config.log_to_driver}
    if config.address:
        return {"address": config.address, **options}
    return {**options, "include_dashboard": config.include_dashboard,
            "dashboard_host": LOOPBACK, "_node_ip_address": LOOPBACK}


def local_environment() -> dict[str, str]:
    """The environment a local run starts Ray with: LOCAL_ENVIRONMENT under exported values."""
    return {name: os.environ.get(name, value) for name, value in LOCAL_ENVIRONMENT.items()}


def connect(config: RayConfig) -> None:
    """ray.init on this machine (listening on loopback only, no usage statistics, without
    Ray's token-authentication notice), or join the cluster at `config.address`."""
    if ray.is_initialized():
        return
    if not config.address:
        os.environ.update(local_environment())  # Ray's processes inherit it
        # Ray reads the single-machine switch once, when it is imported (perhaps before now).
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = (
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"].lower() in ("1", "true"))
        with token_notice_dropped():
            ray.init(**init_options(config))
        return
    ray.init(**init_options(config))

