"""Growing a trained net deeper: the same function, the run's state kept, and a run that
starts from another run's checkpoint (`start_from`), grown or not."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from catena_zero.cli.common import compose
from catena_zero.cli.train import build_config
from catena_zero.network import NetworkConfig, PolicyValueNet
from catena_zero.pipeline.inline import train_loop
from catena_zero.rules import NUM_GLOBALS, NUM_PLANES
from catena_zero.train import latest_checkpoint, load_checkpoint
from catena_zero.train.checkpoint import build_network
from catena_zero.train.grow import grow_checkpoint, grow_network

torch.set_num_threads(1)


def trained_net(blocks: int = 2, seed: int = 0, normalisation: str = "batch"
                ) -> PolicyValueNet:
    """A net whose batch-norm statistics and weights are not at their initial values."""
    torch.manual_seed(seed)
    net = PolicyValueNet(NUM_PLANES, NUM_GLOBALS, NetworkConfig(
        blocks=blocks, channels=16, global_pool_channels=4, value_hidden=16,
        normalisation=normalisation))
    with torch.no_grad():
        for name, tensor in net.state_dict().items():
            if tensor.is_floating_point() and "running_var" not in name:
                tensor.add_(0.1 * torch.randn_like(tensor))
    return net.eval()


def random_inputs(side: int, count: int = 5, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    size = 2 * side - 1
    planes = (torch.rand(count, NUM_PLANES, size, size, generator=generator) < 0.3).float()
    return planes, torch.rand(count, NUM_GLOBALS, generator=generator)


def assert_computes_the_same(net: PolicyValueNet, grown: PolicyValueNet) -> None:
    """Every head of `grown` gives what `net`'s gives on sides 3, 6 and 10."""
    for side in (3, 6, 10):
        planes, globals_ = random_inputs(side, seed=side)
        with torch.no_grad():
            before, after = net(planes, globals_), grown(planes, globals_)
        torch.testing.assert_close(after.policy_logits, before.policy_logits)
        torch.testing.assert_close(after.value_logits, before.value_logits)
        torch.testing.assert_close(after.score, before.score)
        torch.testing.assert_close(after.ownership, before.ownership)


@pytest.mark.parametrize("blocks", [2, 3, 4, 7])
def test_a_grown_net_computes_what_the_net_computed(blocks: int) -> None:
    net = trained_net()
    grown = grow_network(net, blocks).eval()
    assert grown.config.blocks == blocks and len(grown.blocks) == blocks
    assert grown.config.channels == net.config.channels
    assert_computes_the_same(net, grown)
    # The pooling blocks fall where a net built at this depth has them.
    assert [block.pool_channels > 0 for block in grown.blocks] == [
        (index + 1) % net.config.global_pool_every == 0 for index in range(blocks)]


@pytest.mark.parametrize("normalisation", ["batch", "none"])
@pytest.mark.parametrize("blocks,channels", [(2, 24), (3, 24), (3, 32)])
def test_a_widened_net_computes_what_the_net_computed(normalisation: str, blocks: int,
                                                      channels: int) -> None:
    net = trained_net(normalisation=normalisation)
    grown = grow_network(net, blocks, channels)
    assert (grown.config.blocks, grown.config.channels) == (blocks, channels)
    for training in (False, True):  # running statistics, and each batch's own
        net.train(training)
        grown.train(training)
        assert_computes_the_same(net, grown)


def test_the_added_channels_learn() -> None:
    """Their readers start at zero but get a gradient: the channels carry values."""
    net = trained_net()
    grown = grow_network(net, 2, 24).train()
    planes, globals_ = random_inputs(6, count=8)
    output = grown(planes, globals_)
    (output.value_logits.sum() + output.policy_logits[:, :10].sum()).backward()
    assert grown.blocks[0].conv1.weight.grad[:, 16:].abs().sum() > 0  # reads the trunk's
    assert grown.value_conv.weight.grad[:, 16:].abs().sum() > 0
    regular = 16 - grown.blocks[1].pool_channels  # the old block's added inner channels
    assert grown.blocks[1].conv2.weight.grad[:16, regular:regular + 8].abs().sum() > 0


def test_the_new_blocks_learn() -> None:
    """Their last convolution starts at zero but its gradient does not."""
    grown = grow_network(trained_net(), 3).train()
    planes, globals_ = random_inputs(6, count=8)
    output = grown(planes, globals_)
    (output.value_logits.sum() + output.policy_logits[:, :10].sum()).backward()
    assert grown.blocks[2].conv2.weight.grad.abs().sum() > 0


def test_a_net_cannot_shrink() -> None:
    with pytest.raises(ValueError, match="at least the 2 blocks"):
        grow_network(trained_net(), 1)
    with pytest.raises(ValueError, match="at least the 16 channels"):
        grow_network(trained_net(), 2, 8)


def tiny_config(run_dir: Path, *overrides: str):
    return build_config(compose("train", ["preset=tiny", f"run_dir={run_dir}",
                                          "tensorboard=false", *overrides]))


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """The checkpoint of a two-iteration tiny run (a 1x16 net on side 3)."""
    run_dir = tmp_path_factory.mktemp("tiny")
    train_loop(tiny_config(run_dir))
    return latest_checkpoint(run_dir / "checkpoints")


def test_a_grown_checkpoint_keeps_the_run(tiny_run: Path, tmp_path: Path) -> None:
    old = load_checkpoint(tiny_run)
    path = grow_checkpoint(tiny_run, 3, tmp_path / "grown")
    new = load_checkpoint(path)
    assert path.name == tiny_run.name
    assert new.network_args["config"]["blocks"] == 3
    assert new.config["network"]["blocks"] == 3
    assert new.counters == old.counters and new.trainer_step == old.trainer_step
    assert new.extra == old.extra and new.rules == old.rules
    for name in ("selfplay", "train"):
        assert new.rng_states["generators"][name] == old.rng_states["generators"][name]
    # The old parameters keep their AdamW moments; the new ones start without.
    assert len(new.optimizer_state["state"]) == len(old.optimizer_state["state"])
    planes, globals_ = random_inputs(3)
    with torch.no_grad():
        before = build_network(old).eval()(planes, globals_)
        after = build_network(new).eval()(planes, globals_)
    torch.testing.assert_close(after.policy_logits, before.policy_logits)
    with pytest.raises(ValueError, match="already holds checkpoints"):
        grow_checkpoint(tiny_run, 3, tmp_path / "grown")


def test_a_run_starts_from_another_runs_checkpoint_grown(tiny_run: Path,
                                                         tmp_path: Path) -> None:
    run_dir = tmp_path / "deeper"
    summary = train_loop(tiny_config(run_dir, "resume=true", f"start_from={tiny_run}",
                                     "network.blocks=2", "iterations=3"))
    assert summary["counters"]["iteration"] == 3  # one more than the run it started from
    checkpoint = load_checkpoint(summary["checkpoint"])
    assert checkpoint.network_args["config"]["blocks"] == 2
    assert summary["counters"]["step"] == load_checkpoint(tiny_run).trainer_step + 4
    # Resumed again, it continues from its own checkpoint and leaves start_from alone.
    again = train_loop(tiny_config(run_dir, "resume=true", f"start_from={tiny_run}",
                                   "network.blocks=2", "iterations=4"))
    assert again["resumed_from_iteration"] == 3 and again["counters"]["iteration"] == 4


def test_a_run_starts_from_another_runs_checkpoint_widened(tiny_run: Path,
                                                          tmp_path: Path) -> None:
    summary = train_loop(tiny_config(tmp_path / "wider", "resume=true",
                                     f"start_from={tiny_run}", "network.channels=24",
                                     "iterations=3"))
    checkpoint = load_checkpoint(summary["checkpoint"])
    assert checkpoint.network_args["config"]["channels"] == 24
    assert checkpoint.network_args["config"]["blocks"] == 1


def test_start_from_at_the_same_depth_branches_the_run(tiny_run: Path, tmp_path: Path) -> None:
    summary = train_loop(tiny_config(tmp_path / "branch", "resume=true",
                                     f"start_from={tiny_run}", "iterations=3"))
    assert summary["resumed_from_iteration"] == 2
    assert load_checkpoint(summary["checkpoint"]).network_args["config"]["blocks"] == 1


@pytest.mark.parametrize("overrides,message", [
    (["network.value_hidden=24"], "value_hidden 16 \\(this run: 24\\)"),
])
def test_start_from_refuses_another_net(tiny_run: Path, tmp_path: Path, overrides: list[str],
                                        message: str) -> None:
    run_dir = tmp_path / "other"
    with pytest.raises(ValueError, match=message):
        train_loop(tiny_config(run_dir, "resume=true", f"start_from={tiny_run}", *overrides))
    assert not list((run_dir / "checkpoints").glob("*.pt"))


def test_start_from_refuses_a_shallower_net(tmp_path: Path, tiny_run: Path) -> None:
    deeper = grow_checkpoint(tiny_run, 2, tmp_path / "two")
    with pytest.raises(ValueError, match="grow, not shrink"):
        train_loop(tiny_config(tmp_path / "one", "resume=true", f"start_from={deeper}"))


def test_start_from_needs_resume(tiny_run: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="start_from needs resume=true"):
        tiny_config(tmp_path / "run", f"start_from={tiny_run}")


def test_a_resumed_run_names_the_net_it_trains(tiny_run: Path, tmp_path: Path,
                                               capsys) -> None:
    deeper = grow_checkpoint(tiny_run, 2, tmp_path / "two" / "checkpoints")
    assert deeper.exists()
    train_loop(tiny_config(tmp_path / "two", "resume=true", "iterations=3"))
    captured = capsys.readouterr()
    assert "resuming the checkpoint's 2x16 net; network (1x16) is not used" in captured.err
    header = next(line for line in (captured.out + captured.err).splitlines()
                  if line.startswith("train: tracks"))
    assert "net 2x16" in header
