// presk serve: an OpenAI-style completions server over a program's decode entry (src/generate)
// on cpp-httplib. POST /v1/completions (prompt, max_tokens, temperature, top_k, seed, stream as
// server-sent events), GET /health, GET /v1/models. At most `workers` generations run at once
// and `queue` more wait; beyond that a request is answered 503. A bad request is a 4xx whose
// error body names the field. SIGTERM (or SIGINT) stops taking requests, finishes those in
// flight, and returns. Errors E1520–E1529.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <string>

#include <nlohmann/json.hpp>

#include "generate/generate.h"

namespace presk::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (printed on stderr)
  int workers = 2;  // generations at once
  int queue = 8;    // requests waiting for a worker
  std::string model_name = "presk";
};

// What the server generates with: the model, its vocabulary, the context.
struct Generator {
  generate::DecodeEntry entry;
  const generate::Vocabulary* vocabulary = nullptr;
  std::string realization;  // for /v1/models: R, or "exact"
  std::function<std::unique_ptr<generate::Stepper>()> stepper;  // a fresh generation (thread-safe)
};

// A completion request's fields, checked.
struct CompletionRequest {
  std::vector<int64_t> prompt;
  std::string prompt_text;
  int64_t max_tokens = 16;
  generate::Sampling sampling;
  bool stream = false;
};
// The request, or the 400 error: the field it names and why (E1520–E1524).
struct RequestError {
  std::string code, field, message;
};
std::variant<CompletionRequest, RequestError> parse_completion(const std::string& body, const Generator& generator);
// An OpenAI-style error body: {"error": {"message", "type", "param", "code"}}.
nlohmann::json error_body(const RequestError& error, const std::string& type = "invalid_request_error");

// Serves until SIGTERM or SIGINT; prints "presk serve: listening on http://HOST:PORT" on stderr
// once it accepts connections. E1525 when the address cannot be bound.
int serve(const Generator& generator, const ServeOptions& options);

}  // namespace presk::serve
