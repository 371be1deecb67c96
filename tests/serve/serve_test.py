"""presk serve, driven by a real HTTP client (http.client) on a free loopback port: a
completion, a streamed completion read event by event, 8 concurrent requests answered with the
single-request texts, the 4xx cases naming their field, 503 past the queue, SIGTERM with a
request in flight."""
import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import unittest

import tiny_model

PRESK, SOURCE = sys.argv[1], sys.argv[2]
MODEL = None


class Server:
    def __init__(self, *extra):
        _, program, weights = MODEL
        self.process = subprocess.Popen([PRESK, "serve", program, *tiny_model.BINDINGS, "--weights", weights,
                                         "--port", "0", *extra], stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.process.kill()
            raise AssertionError("no listening line: " + line + self.process.stderr.read())
        self.port = int(match.group(1))

    def request(self, method, path, body=None, raw=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        payload = raw if raw is not None else (json.dumps(body) if body is not None else None)
        connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read().decode()
        connection.close()
        return response.status, data

    def complete(self, **body):
        status, data = self.request("POST", "/v1/completions", body)
        return status, json.loads(data)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        self.process.stderr.close()


class Serve(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--workers", "2", "--queue", "8")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_health_and_models(self):
        status, data = self.server.request("GET", "/health")
        self.assertEqual((status, json.loads(data)["status"]), (200, "ok"))
        status, data = self.server.request("GET", "/v1/models")
        models = json.loads(data)
        self.assertEqual(status, 200)
        self.assertEqual(models["data"][0]["context_length"], 16)

    def test_completion_is_the_generate_commands_text(self):
        status, body = self.server.complete(prompt="the c", max_tokens=10)
        self.assertEqual(status, 200, body)
        text = body["choices"][0]["text"]
        self.assertEqual(len(text), 10)
        self.assertEqual(body["usage"], {"prompt_tokens": 5, "completion_tokens": 10, "total_tokens": 15})
        _, program, weights = MODEL
        cli = tiny_model.run(PRESK, "generate", program, *tiny_model.BINDINGS, "--weights", weights, "--prompt", "the c",
                             "--tokens", "10", "--json")
        self.assertEqual(json.loads(cli.stdout)["text"], text)

    def test_streamed_completion_read_event_by_event(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        connection.request("POST", "/v1/completions", body=json.dumps({"prompt": "the c", "max_tokens": 10, "stream": True}))
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertIn("text/event-stream", response.getheader("Content-Type"))
        pieces, finish = [], None
        while True:
            line = response.readline().decode()
            self.assertTrue(line, "the stream ended before [DONE]")
            if not line.strip():
                continue
            self.assertTrue(line.startswith("data: "), line)
            data = line[len("data: "):].strip()
            if data == "[DONE]":
                break
            choice = json.loads(data)["choices"][0]
            if choice["finish_reason"]:
                finish = choice["finish_reason"]
            else:
                pieces.append(choice["text"])
        connection.close()
        self.assertEqual(finish, "length")
        self.assertEqual(len(pieces), 10)
        _, single = self.server.complete(prompt="the c", max_tokens=10)
        self.assertEqual("".join(pieces), single["choices"][0]["text"])

    def test_eight_concurrent_requests_give_the_single_texts(self):
        prompts = ["the", "the c", "cat", "on t", "mat.", "sat", "the m", "at"]
        single = {p: self.server.complete(prompt=p, max_tokens=8, temperature=0.7, seed=3)[1]["choices"][0]["text"]
                  for p in prompts}
        results = {}

        def ask(prompt):
            results[prompt] = self.server.complete(prompt=prompt, max_tokens=8, temperature=0.7, seed=3)

        threads = [threading.Thread(target=ask, args=(p,)) for p in prompts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for prompt in prompts:
            status, body = results[prompt]
            self.assertEqual(status, 200, body)
            self.assertEqual(body["choices"][0]["text"], single[prompt], prompt)

    def test_bad_requests_are_4xx_naming_the_field(self):
        cases = [({"raw": "{not json"}, "body", "E1520"),
                 ({"body": [1, 2]}, "body", "E1520"),
                 ({"body": {"max_tokens": 3}}, "prompt", "E1521"),
                 ({"body": {"prompt": "the", "max_tokens": -1}}, "max_tokens", "E1522"),
                 ({"body": {"prompt": "the", "temperature": "hot"}}, "temperature", "E1522"),
                 ({"body": {"prompt": "the", "stream": "yes"}}, "stream", "E1522"),
                 ({"body": {"prompt": "xyz"}}, "prompt", "E1523"),
                 ({"body": {"prompt": "the cat sat on the mat"}}, "prompt", "E1524"),
                 ({"body": {"prompt": "the", "max_tokens": 15}}, "max_tokens", "E1524")]
        for case, field, code in cases:
            status, data = self.server.request("POST", "/v1/completions", body=case.get("body"), raw=case.get("raw"))
            self.assertEqual(status, 400, (case, data))
            error = json.loads(data)["error"]
            self.assertEqual((error["param"], error["code"]), (field, code), case)
        status, data = self.server.request("GET", "/v2/nothing")
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(data)["error"]["param"], "path")


class Limits(unittest.TestCase):
    def test_a_full_queue_answers_503_and_sigterm_finishes_the_request_in_flight(self):
        # The exact reference at 4096 bits: slow enough that the request is still in flight.
        server = Server("--workers", "1", "--queue", "0", "--exact", "--bits", "4096")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            connection.request("POST", "/v1/completions", body=json.dumps({"prompt": "t", "max_tokens": 16, "stream": True}))
            response = connection.getresponse()
            first = response.readline().decode()  # the request is in flight: its first event came
            self.assertTrue(first.startswith("data: "), first)
            status, data = server.request("POST", "/v1/completions", body={"prompt": "the", "max_tokens": 2})
            self.assertEqual(status, 503, data)
            server.process.send_signal(signal.SIGTERM)
            rest = response.read().decode()
            self.assertIn("data: [DONE]", rest, "the request in flight was cut off")
            events = [l for l in (first + rest).splitlines() if l.startswith("data: {")]
            self.assertEqual(len(events), 17)  # 16 tokens and the finish
            self.assertEqual(server.process.wait(timeout=60), 0)
            connection.close()
        finally:
            if server.process.poll() is None:
                server.process.kill()


if __name__ == "__main__":
    MODEL = tiny_model.build(PRESK, SOURCE)
    unittest.main(argv=[sys.argv[0]])
