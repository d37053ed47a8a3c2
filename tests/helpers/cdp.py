"""A small Chrome DevTools Protocol client for tests: headless Chromium driven over a pipe.

Chromium started with ``--remote-debugging-pipe`` reads commands on fd 3 and writes responses
and events on fd 4, one JSON message per NUL-terminated chunk (what Puppeteer does), so the test
needs no websocket library, no driver binary and no TCP port. Every event is kept, so a test can
assert on what the page did (network requests, dialogs, downloads) after the fact.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
"""Every test's Chromium: headless, nothing fetched in the background (give it a fresh --user-data-dir)."""


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with a fresh profile; :meth:`open` gives a :class:`Page`."""

    def __init__(self, profile: Path, downloads: Path, window: str = "1280,900"):
        assert CHROMIUM is not None, "chromium is not installed"
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: our pipe ends become fds 3 and 4
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                f"--window-size={window}",
                "about:blank",
            ],  # fmt: skip
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            pass_fds=(3, 4),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.events: list[dict[str, Any]] = []
        self._replies: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._wlock = threading.Lock()
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.downloads = downloads
        self.send(
            "Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads), eventsEnabled=True
        )

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._cond.notify_all()
                return
            buf += chunk
            *messages, buf = buf.split(b"\0")
            with self._cond:
                for raw in messages:
                    msg = json.loads(raw)
                    if "id" in msg:
                        self._replies[msg["id"]] = msg
                        continue
                    self.events.append(msg)
                    if msg["method"] == "Page.javascriptDialogOpening":  # never let a dialog block the page
                        self._write(
                            {"id": -len(self.events), "method": "Page.handleJavaScriptDialog",
                             "params": {"accept": False}, "sessionId": msg.get("sessionId")}
                        )  # fmt: skip
                self._cond.notify_all()

    def _write(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg).encode() + b"\0"
        with self._wlock:  # the reader thread writes too (dialogs)
            while data:
                data = data[os.write(self._to_chrome, data) :]

    def send(self, method: str, session: str | None = None, timeout: float = 60, **params: Any) -> dict:
        with self._cond:
            self._next += 1
            mid = self._next
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._write(msg)
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise CDPError(f"no reply to {method}")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, match=lambda params: True, timeout: float = 60) -> dict:
        """The first event ``method`` (seen before or after this call) whose params ``match``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self.events:
                    if e["method"] == method and match(e.get("params", {})):
                        return e["params"]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPError(f"no {method} event")
                self._cond.wait(left)

    def events_of(self, method: str) -> list[dict]:
        with self._cond:
            return [e.get("params", {}) for e in self.events if e["method"] == method]

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Network", "Runtime"):
            self.send(f"{domain}.enable", session)
        page.goto(url)
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except CDPError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        self._reader.join(timeout=5)
        os.close(self._from_chrome)


class Page:
    """One tab: evaluate JavaScript, click and type like a user, take screenshots."""

    def __init__(self, browser: Browser, session: str):
        self.browser = browser
        self.session = session

    def send(self, method: str, **params: Any) -> dict:
        return self.browser.send(method, self.session, **params)

    def goto(self, url: str) -> None:
        loads = len(self.browser.events_of("Page.loadEventFired"))
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while len(self.browser.events_of("Page.loadEventFired")) <= loads:
            if time.monotonic() > deadline:
                raise CDPError(f"{url} did not load")
            time.sleep(0.05)
        self.wait_for("document.body && document.body.dataset.rendered === 'yes'")

    def evaluate(self, expression: str) -> Any:
        res = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise CDPError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for {expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A real mouse click (pressed + released) in the middle of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center', inline: 'center'});"
            " const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise CDPError(f"no element {selector}")
        x, y = box
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type(self, text: str) -> None:
        """Text typed into the focused element (an ``input`` event, as typing fires)."""
        self.send("Input.insertText", text=text)

    def press(self, key: str) -> None:
        """One key press (a printable character, or a named key like Escape or ArrowRight)."""
        named = {"Escape": 27, "ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40}
        down: dict[str, Any] = {"type": "keyDown", "key": key}
        if key in named:
            down.update(code=key, windowsVirtualKeyCode=named[key])
        else:
            down.update(type="keyDown", text=key, windowsVirtualKeyCode=ord(key.upper()))
        self.send("Input.dispatchKeyEvent", **down)
        self.send("Input.dispatchKeyEvent", type="keyUp", key=key)

    def screenshot(self, path: Path) -> Path:
        import base64

        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path
