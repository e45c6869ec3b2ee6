"""A minimal W3C WebDriver client (stdlib only) driving headless Chromium via chromedriver.

Used by the browser end-to-end test; needs the Debian packages `chromium` and
`chromium-driver` (`/usr/bin/chromium`, `/usr/bin/chromedriver`).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_CANDIDATES = ("chromedriver",)
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1200,900",
]


def find_browser() -> tuple[str | None, str | None]:
    """(chromium path, chromedriver path); None for what is not installed."""
    browser = next((shutil.which(name) for name in CHROMIUM_CANDIDATES if shutil.which(name)),
                   None)
    driver = next((shutil.which(name) for name in DRIVER_CANDIDATES if shutil.which(name)), None)
    return browser, driver


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class WebDriverError(RuntimeError):
    pass


class ChromiumSession:
    """Start chromedriver, open a headless Chromium session; use as a context manager."""

    def __init__(self, browser: str, driver: str, timeout: float = 60.0) -> None:
        self.port = _free_port()
        self.profile = tempfile.mkdtemp(prefix="catena-chromium-")
        self.process = subprocess.Popen(
            [driver, f"--port={self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._call("GET", "/status")
                break
            except (OSError, WebDriverError):
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.close()
                    raise WebDriverError("chromedriver did not start") from None
                time.sleep(0.2)
        options = {"binary": browser, "args": CHROMIUM_FLAGS + [f"--user-data-dir={self.profile}"]}
        capabilities = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}}
        try:
            created = self._call("POST", "/session", capabilities, timeout=timeout)
            self.session = created["sessionId"]
        except Exception:
            self.close()
            raise

    def _call(self, method: str, path: str, body: dict | None = None,
              timeout: float = 60.0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as error:
            payload = json.loads(error.read() or b"{}")
            raise WebDriverError(f"{method} {path}: {payload.get('value', payload)}") from error
        return payload.get("value") if isinstance(payload, dict) else payload

    def command(self, method: str, path: str, body: dict | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    def script(self, source: str, *args: Any) -> Any:
        return self.command("POST", "/execute/sync", {"script": source, "args": list(args)})

    def find(self, css: str) -> str:
        value = self.command("POST", "/element", {"using": "css selector", "value": css})
        return next(iter(value.values()))

    def click(self, css: str) -> None:
        self.command("POST", f"/element/{self.find(css)}/click", {})

    def screenshot_png(self) -> bytes:
        """The visible page as PNG bytes (WebDriver "Take Screenshot")."""
        import base64

        return base64.b64decode(self.command("GET", "/screenshot"))

    def wait_for(self, source: str, timeout: float = 60.0, *args: Any) -> Any:
        """Poll the JavaScript expression `source` (a function body returning a value)
        until it is truthy; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.script(source, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                raise WebDriverError(f"timed out waiting for: {source}")
            time.sleep(0.1)

    def close(self) -> None:
        if getattr(self, "session", None):
            try:
                self._call("DELETE", f"/session/{self.session}", timeout=20)
            except (OSError, WebDriverError):
                pass
            self.session = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> ChromiumSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
