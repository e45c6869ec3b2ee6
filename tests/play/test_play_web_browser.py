"""End to end in headless Chromium: load the page, click a cell, the model answers, the board
updates. Skips only when Chromium or chromedriver is not installed."""

from __future__ import annotations

import threading

import pytest
import torch

from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.web import ServeConfig, make_server
from tests.export.tiny_model import tiny_model_file
from tests.play.chromium_driver import ChromiumSession, find_browser

BROWSER, DRIVER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="headless browser test needs Chromium and chromedriver "
           "(apt-get install -y chromium chromium-driver)",
)

STONES = "return document.querySelectorAll('circle.stone').length"


@pytest.fixture()
def server_url():
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=8))
    server = make_server(player, ServeConfig(port=0))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_click_a_cell_and_the_model_answers(server_url: str) -> None:
    with ChromiumSession(BROWSER, DRIVER) as browser:
        browser.open(server_url)
        # The page starts a side-3 game (the only side of the model): 19 cells, no stones.
        browser.wait_for("return document.querySelectorAll('polygon.cell').length === 19 "
                         "&& document.body.dataset.busy === '0'")
        assert browser.script(STONES) == 0
        assert browser.script("return document.getElementById('status').textContent") \
            .startswith("Your move (black)")
        labels = browser.script(
            "return Array.from(document.querySelectorAll('text.coord')).map(t => t.textContent)")
        assert {"A", "E", "1", "5"} <= set(labels)
        browser.click('polygon.cell.legal[data-cell="C3"]')
        browser.wait_for(f"{STONES} === 2 && document.body.dataset.busy === '0'")
        stones = browser.script(
            "return Array.from(document.querySelectorAll('circle.stone'))"
            ".map(c => c.getAttribute('data-cell') + ':' + c.getAttribute('class'))")
        assert "C3:stone black" in stones
        reply = [s for s in stones if not s.startswith("C3")]
        assert len(reply) == 1 and reply[0].endswith("stone white")
        status = browser.script("return document.getElementById('status').textContent")
        assert "model played " + reply[0].split(":")[0] in status
        assert browser.script("return document.querySelectorAll('#history li').length") == 2
        winrate = browser.script("return document.getElementById('winrate').textContent")
        assert winrate.endswith("%")
        # The cell just played is no longer clickable; undo restores the empty board.
        assert browser.script(
            "return document.querySelector('polygon.cell.legal[data-cell=\"C3\"]')") is None
        browser.click("#undo")
        browser.wait_for(f"{STONES} === 0 && document.body.dataset.busy === '0'")
        assert browser.script("return document.getElementById('error').textContent") == ""
