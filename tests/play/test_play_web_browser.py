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


TEXT = "return document.getElementById({!r}).textContent"
IDLE = "document.body.dataset.busy === '0'"


def test_a_whole_game_explains_itself(server_url: str) -> None:
    with ChromiumSession(BROWSER, DRIVER) as browser:
        browser.open(server_url)
        browser.wait_for(f"return document.querySelectorAll('polygon.cell').length === 19 "
                         f"&& {IDLE}")
        assert browser.script(TEXT.format("score")) == (
            "score now (stones): Black 0 = 0 stones | White 0 = 0 stones | 0")
        header = browser.script(TEXT.format("model"))
        assert header.startswith("side 3 ") and "|" not in header
        legend = browser.script(TEXT.format("legend"))
        assert "no stone can ever go there" in legend and "ownership" in legend
        browser.click('polygon.cell.legal[data-cell="C3"]')
        browser.wait_for(f"{STONES} === 2 && {IDLE}")
        assert browser.script(TEXT.format("score")) == (
            "score now (stones): Black 1 = 1 stone | White 1 = 1 stone | 0")
        assert browser.script(TEXT.format("score-lead")).endswith(" stones")
        colours = browser.script("return Array.from(document.querySelectorAll('#history li'))"
                                 ".map(li => li.className)")
        assert colours == ["black", "white"]
        assert browser.script("return document.querySelectorAll('circle.last-move').length") \
            == 1
        claims, reasons = [], []
        while not browser.script("return current.over"):
            unplayable = browser.script(
                "const c = document.querySelector('polygon.cell.unplayable');"
                "return c && c.getAttribute('data-cell')")
            if unplayable and not reasons:
                browser.click(f'polygon.cell[data-cell="{unplayable}"]')
                browser.wait_for(f"return {IDLE} && "
                                 f"document.getElementById('error').textContent")
                reasons.append(browser.script(TEXT.format("error")))
            browser.click("polygon.cell.legal")
            browser.wait_for(f"return {IDLE} && document.getElementById('error')"
                             f".textContent === ''")
            claims += browser.script("return Array.from(document.querySelectorAll("
                                     "'#claims li')).map(li => li.textContent)")
        assert reasons and reasons[0].startswith("illegal move ") and "would" in reasons[0]
        assert any(" claims it" in claim and claim.startswith(("you played", "the model "))
                   for claim in claims), claims
        final = browser.script(TEXT.format("score"))
        assert final.startswith("final score (stones): Black ") and "in claimed ribbons" in final
