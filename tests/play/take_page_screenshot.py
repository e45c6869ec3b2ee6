"""Take docs/images/web-page.png: a side-3 game on the page against the tiny test model,
played until the model claims a ribbon. Needs Chromium and chromedriver.

    PYTHONPATH=$PWD python tests/play/take_page_screenshot.py
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import torch

from catena_zero.play.bundled import ModelLibrary
from catena_zero.play.model_player import ModelPlayer, PlayerConfig
from catena_zero.play.web import ServeConfig, make_server
from tests.export.tiny_model import tiny_model_file
from tests.play.chromium_driver import ChromiumSession, find_browser

IDLE = "return document.body.dataset.busy === '0'"
OPENING = ["C3", "B3", "D4", "E4", "B1", "A3"]


def main(target: Path = Path("docs/images/web-page.png")) -> None:
    torch.set_num_threads(1)
    player = ModelPlayer(ModelLibrary(tiny_model_file(3)), PlayerConfig(simulations=8))
    server = make_server(player, ServeConfig(port=0))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with ChromiumSession(*find_browser()) as browser:
            browser.open(f"http://127.0.0.1:{server.server_address[1]}/")
            browser.wait_for("return document.querySelectorAll('polygon.cell').length === 19 "
                             "&& document.body.dataset.busy === '0'")
            for cell in OPENING:
                selector = f'polygon.cell.legal[data-cell="{cell}"]'
                if browser.script(f"return !!document.querySelector('{selector}')"):
                    browser.click(selector)
                    browser.wait_for(IDLE)
                    time.sleep(0.3)
            for _ in range(12):  # on until a claim is announced
                if browser.script("return current.over || current.claims.length > 0"):
                    break
                browser.click("polygon.cell.legal")
                browser.wait_for(IDLE)
                time.sleep(0.3)
            target.write_bytes(browser.screenshot_png())
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
