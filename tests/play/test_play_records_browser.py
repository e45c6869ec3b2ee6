"""The page's game-record controls in headless Chromium: load a record, step through it.
Skips only when Chromium or chromedriver is not installed."""

from __future__ import annotations

import json

import pytest

from tests.play.chromium_driver import ChromiumSession, find_browser
from tests.play.web_helpers import LOOPBACK, FakePlayer, running_server

BROWSER, DRIVER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None or DRIVER is None,
    reason="headless browser test needs Chromium and chromedriver "
           "(apt-get install -y chromium chromium-driver)",
)
STONES = "return document.querySelectorAll('circle.stone').length"
RECORD = "(;GM[Catena]FF[4]SZ[3]KM[0]PB[human];B[C3];W[A1];B[E5];W[B1])"
LOAD = """
const input = document.getElementById('load-record');
const files = new DataTransfer();
files.items.add(new File([arguments[0]], 'game.sgf', {type: 'text/plain'}));
input.files = files.files;
input.dispatchEvent(new Event('change'));
"""


def test_load_a_record_and_step_through_it() -> None:
    with running_server(FakePlayer(side=3)) as server, \
            ChromiumSession(BROWSER, DRIVER) as browser:
        browser.open(f"http://{LOOPBACK}:{server.server_address[1]}/")
        browser.wait_for("return document.querySelectorAll('polygon.cell').length === 19 "
                         "&& document.body.dataset.busy === '0'")
        assert browser.script("return document.getElementById('replay-first').disabled")
        browser.script(LOAD, RECORD)
        browser.wait_for("return document.querySelectorAll('#history li').length === 4 "
                         "&& !document.getElementById('replay-first').disabled")
        assert browser.script(STONES) == 4
        browser.click("#replay-first")
        browser.wait_for(f"{STONES} === 0")
        status = browser.script("return document.getElementById('status').textContent")
        assert status.startswith("Replay: move 0 of 4")
        browser.click("#replay-next")
        browser.wait_for(f"{STONES} === 1")
        assert browser.script(
            "return document.querySelector('circle.stone').getAttribute('data-cell')") == "C3"
        browser.click("#replay-previous")
        browser.wait_for(f"{STONES} === 0")
        browser.click("#replay-last")
        browser.wait_for(f"{STONES} === 4")
        assert browser.script("return document.getElementById('status').textContent") \
            .startswith("Your move (black)")
        assert json.dumps(browser.script("return document.getElementById('error').textContent")) \
            == '""'
