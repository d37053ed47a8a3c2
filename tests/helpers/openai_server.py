"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (no mocks of the client).

It serves ``POST /v1/chat/completions`` from a thread with scripted, deterministic behaviour,
chosen by markers in the prompt text (which tests put into query texts):

- ``[fenced]`` answers JSON in a Markdown fence, ``[numbered]`` a numbered prose list,
  ``[prose]`` JSON with chatter around it, ``[malformed]`` broken JSON (good JSON once the
  prompt carries the client's retry nudge), ``[429]`` / ``[500]`` fail the first attempt,
  ``[slow]`` delays the first attempt by ``slow`` seconds;
- ``fail_rate`` fails that fraction of all requests (429 with ``Retry-After: 0`` or 500), decided
  by a seeded hash of (prompt, attempt), so which requests fail does not depend on timing;
- ``faults`` maps a marker (or a tuple of markers, all of which must occur) to a :class:`Fault`:
  every request whose user text contains the marker gets that reply instead (an HTTP status, a
  raw body such as cut-off JSON or an HTML page, an error body that echoes the request's
  Authorization header), on every attempt or the first ``times`` ones -- per-prompt failures;
- answers follow the prompt kind: self-rating prompts get a digit 0-5 and HELM-style direct
  prompts Yes/No, both from the word overlap of question (query) and context; the answer-key QA
  prompt a span of the context and the answer-verification prompt yes/no (``qa_span``,
  ``verifies``); question/nugget
  generation (JSON), AutoNuggetizer creation
  (one nugget per context passage: its first five words), importance (``okay`` when the nugget
  says "minor", else ``vital``) and assignment (support when every word of the nugget occurs in
  the passage, partial_support when at least half do, else not_support).

Every request is logged (``requests``) so tests can count retries and check headers;
``answered`` counts the successful replies.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rubric.llm.lists import python_literal

RETRY_NUDGE = "Answer with the list only"  # the substring the client adds when re-asking


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _list_after(label: str, text: str) -> list[str]:
    m = re.search(re.escape(label) + r"\s*(\[.*?\])\s*$", text, re.M | re.S)
    if not m:
        m = re.search(re.escape(label) + r"\s*(\[.*?\])", text, re.S)
    return list(python_literal(m.group(1))) if m else []


def _overlap(item: str, context: str) -> float:
    """Share of the item's words (3+ letters) that occur in the context."""
    item_words = [w for w in words(item) if len(w) >= 3]
    present = set(words(context))
    return sum(w in present for w in item_words) / max(len(item_words), 1)


def qa_span(question: str, context: str) -> str:
    """The answer-key QA prompt's answer: the four context words after the last place where a
    word of the question (3+ letters) occurs; "unanswerable" when there is none (or nothing after)."""
    asked = {w for w in words(question) if len(w) >= 3}
    ctx = words(context)
    at = [i for i, w in enumerate(ctx) if w in asked]
    span = ctx[at[-1] + 1 : at[-1] + 5] if at else []
    return " ".join(span) or "unanswerable"


def verifies(answer: str, gold: str) -> bool:
    """The verification prompt's rule: yes when at least half the gold answer's words (3+ letters)
    occur in the answer."""
    return _overlap(gold, answer) >= 0.5


def grading_answer(user: str) -> str | None:
    """Answers to grading prompts: a 0-5 self-rating or Yes/No, from word overlap; the answer-key
    QA prompt gets a span of the context (:func:`qa_span`), the verification prompt yes/no
    (:func:`verifies`)."""
    if user.startswith("provide a complete and concise answer to the question based on the context."):
        m = re.search(r"Question:\s*(.*?)\nContext:\s*(.*)", user, re.S)
        if m:
            return qa_span(m.group(1), m.group(2))
    m = re.fullmatch(
        r'For the question "(.*)" the correct answer is "(.*)"\. Is "(.*)" an equally correct response '
        r"to this question\? Answer yes or no\.",
        user,
        re.S,
    )
    if m:
        return "yes" if verifies(m.group(3), m.group(2)) else "no"
    if "Can the question be answered based on the available context" in user:
        m = re.search(r"Question:\s*(.*?)\n.*?Context:\s*(.*)", user, re.S)
        if m:
            return str(round(5 * _overlap(m.group(1), m.group(2))))
    if "Does the passage answer the query" in user:
        m = re.search(r"Query:\s*(.*?)\nPassage:\s*(.*?)\nAnswer:", user, re.S)
        if m:
            return "Yes" if _overlap(m.group(1), m.group(2)) >= 0.5 else "No"
    return None


def scripted_answer(user: str, system: str | None) -> str:
    """The content of a successful answer to one prompt."""
    graded = grading_answer(user)
    if graded is not None:
        return graded
    if "label each of the" in user and "vital or okay" in user:
        nuggets = _list_after("Nugget List:", user)
        return json.dumps(["okay" if "minor" in n.lower() else "vital" for n in nuggets])
    if "label each of the" in user and "partial_support" in user:
        passage = re.search(r"Passage:\s*(.*?)\nNugget List:", user, re.S).group(1)
        present = set(words(passage))
        labels = []
        for n in _list_after("Nugget List:", user):
            w = words(n)
            frac = sum(x in present for x in w) / max(len(w), 1)
            labels.append("support" if frac == 1 else "partial_support" if frac >= 0.5 else "not_support")
        return json.dumps(labels)
    if "Update the list of atomic nuggets" in user:
        nuggets = _list_after("Initial Nugget List:", user)
        limit = int(re.search(r"at most (\d+) nuggets", user).group(1))
        for passage in re.findall(r"^\[\d+\] (.*)$", user, re.M):
            nugget = " ".join(passage.split()[:5])
            if nugget and nugget not in nuggets:
                nuggets.append(nugget)
        return json.dumps(nuggets[:limit])
    kind = "nuggets" if '{"nuggets"' in user else "questions"
    quoted = re.findall(r"'([^']*)'", user)
    topic = quoted[-1] if quoted else "topic"
    m = re.search(r"Generate (\d+)", user)
    n = int(m.group(1)) if m else 4
    word = "Question" if kind == "questions" else "Nugget"
    items = [f"{word} {i} on {topic.replace('[', '').replace(']', '')}" for i in range(1, n + 1)]
    if kind == "questions":
        items = [f"{t}?" for t in items]
    if "[malformed]" in user and RETRY_NUDGE not in user:
        return '{"' + kind + '": ["' + items[0] + '", "' + items[1] + '"'
    if "[numbered]" in user:
        return "Here they are:\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1)) + "\nEnjoy."
    body = json.dumps({kind: items})
    if "[fenced]" in user:
        return f"```json\n{body}\n```"
    if "[prose]" in user:
        return f"Sure! Here is the set you asked for: {body} Let me know if you need more."
    return body


@dataclass(frozen=True)
class Fault:
    """A scripted bad reply: ``status`` with ``body`` (bytes sent as is; None: a JSON error object),
    ``echo_auth`` puts the request's Authorization header into the error message (as some
    servers do), ``times`` limits it to the first attempts of a prompt (None: always)."""

    status: int = 500
    body: bytes | None = None
    content_type: str = "application/json"
    echo_auth: bool = False
    times: int | None = None


#: Replies that are not chat completions, each sent with status 200.
HOSTILE_REPLIES = {
    "cut-off JSON": b'{"choices": [{"message": {"role": "assistant", "content": "4',
    "an HTML page": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    "choices null": b'{"id": "x", "choices": null}',
    "no choices": b'{"id": "x", "choices": []}',
    "numeric content": b'{"choices": [{"message": {"role": "assistant", "content": 4}}]}',
    "no message": b'{"choices": [{"index": 0, "finish_reason": "stop"}]}',
    "a JSON list": b"[1, 2, 3]",
    "an error object": b'{"error": {"message": "model overloaded"}}',
}


class _Handler(BaseHTTPRequestHandler):
    server: OpenAIServer
    protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections, as with real servers

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _send(
        self, status: int, body: dict | bytes, headers: dict[str, str] | None = None, content_type: str = ""
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type or "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            pass

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        srv = self.server
        with srv.lock:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            self._post()
        finally:
            with srv.lock:
                srv.in_flight -= 1

    def _post(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(length) or b"{}")
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        messages = req.get("messages", [])
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        system = next((m["content"] for m in messages if m["role"] == "system"), None)
        srv = self.server
        digest = hashlib.md5(json.dumps(messages).encode()).hexdigest()
        with srv.lock:
            attempt = srv.attempts.get(digest, 0)
            srv.attempts[digest] = attempt + 1
            srv.requests.append(
                {
                    "auth": self.headers.get("Authorization"),
                    "body": req,
                    "attempt": attempt,
                    "time": time.monotonic(),
                }
            )
        if req.get("model") == "missing-model":
            self._send(404, {"error": {"message": "model not found"}})
            return
        if srv.api_key and self.headers.get("Authorization") != f"Bearer {srv.api_key}":
            self._send(401, {"error": {"message": "bad key"}})
            return
        if attempt == 0 and "[slow]" in user:
            time.sleep(srv.slow)
        for marker, fault in srv.faults.items():
            markers = (marker,) if isinstance(marker, str) else marker
            if all(m in user for m in markers) and (fault.times is None or attempt < fault.times):
                with srv.lock:
                    srv.failures_sent += 1
                message = "scripted failure"
                if fault.echo_auth:
                    message += f" (request had Authorization: {self.headers.get('Authorization')})"
                body = fault.body if fault.body is not None else {"error": {"message": message}}
                self._send(fault.status, body, content_type=fault.content_type)
                return
        fail = random.Random(f"{srv.seed}|{digest}|{attempt}").random()
        if (attempt == 0 and "[429]" in user) or fail < srv.fail_rate / 2:
            with srv.lock:
                srv.failures_sent += 1
            self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
            return
        if (attempt == 0 and "[500]" in user) or fail < srv.fail_rate:
            with srv.lock:
                srv.failures_sent += 1
            self._send(500, {"error": {"message": "internal error"}})
            return
        content = srv.answer(user, system)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        if req.get("logprobs") and srv.logprobs:
            first = content[:1]
            others = [t for t in "012345" if t != first]
            top = [{"token": first, "logprob": -0.1, "bytes": None}] + [
                {"token": t, "logprob": -3.0 - i, "bytes": None} for i, t in enumerate(others)
            ]
            choice["logprobs"] = {
                "content": [{"token": first, "logprob": -0.1, "bytes": None, "top_logprobs": top}]
            }
        elif req.get("logprobs"):
            self._send(400, {"error": {"message": "logprobs are not supported by this server"}})
            return
        with srv.lock:
            srv.answered += 1
        self._send(
            200,
            {
                "id": f"cmpl-{digest[:8]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req.get("model", ""),
                "choices": [choice],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )


class OpenAIServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fail_rate: float = 0.0, seed: int = 0, slow: float = 0.0, api_key: str | None = None,
                 logprobs: bool = True, answer: Any = scripted_answer,
                 faults: dict[str | tuple[str, ...], Fault] | None = None):  # fmt: skip
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_rate, self.seed, self.slow, self.api_key = fail_rate, seed, slow, api_key
        self.logprobs, self.answer, self.faults = logprobs, answer, dict(faults or {})
        self.lock = threading.Lock()
        self.attempts: dict[str, int] = {}
        self.requests: list[dict] = []
        self.failures_sent = self.answered = 0
        self.in_flight = self.max_in_flight = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out and hang up are part of the script; anything else is shown."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def serve(**behaviour: Any):
    """Run an :class:`OpenAIServer` in a thread for the duration of the block."""
    server = OpenAIServer(**behaviour)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
