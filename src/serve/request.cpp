// The completion request (serve.h): strict JSON, each field checked, the error naming it.
#include <cmath>
#include <variant>

#include "serve/serve.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"

namespace presk::serve {
namespace {

RequestError bad(const std::string& code, const std::string& field, const std::string& message) {
  return RequestError{code, field, message};
}

// An integer field in [low, high], or its error.
std::optional<RequestError> integer_field(const nlohmann::json& body, const char* field, int64_t low, int64_t high,
                                          int64_t& into) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < low || it->get<int64_t>() > high) {
    return bad("E1522", field,
               std::string("`") + field + "` must be an integer in [" + std::to_string(low) + ", " + std::to_string(high) +
                   "], given " + json_excerpt(*it));
  }
  into = it->get<int64_t>();
  return std::nullopt;
}

}  // namespace

nlohmann::json error_body(const RequestError& error, const std::string& type) {
  return {{"error", {{"message", error.message}, {"type", type}, {"param", error.field}, {"code", error.code}}}};
}

std::variant<CompletionRequest, RequestError> parse_completion(const std::string& text, const Generator& generator) {
  nlohmann::json body;
  try {
    body = parse_user_json(text, {"the request body", "E1520", ""});
  } catch (const UserError& error) {
    return bad("E1520", "body", std::string("the request body is not JSON: ") + error.what());
  }
  if (!body.is_object()) return bad("E1520", "body", "the request body must be a JSON object, given " + json_excerpt(body));
  CompletionRequest request;
  auto prompt = body.find("prompt");
  if (prompt == body.end() || !prompt->is_string()) {
    return bad("E1521", "prompt", "`prompt` must be a string, given " + (prompt == body.end() ? "none" : json_excerpt(*prompt)));
  }
  request.prompt_text = prompt->get<std::string>();
  if (request.prompt_text.empty()) return bad("E1521", "prompt", "`prompt` is empty: give at least one character");
  const int64_t context = generator.entry.context;
  if (auto error = integer_field(body, "max_tokens", 0, context, request.max_tokens)) return *error;
  int64_t top_k = 0, seed = 0;
  if (auto error = integer_field(body, "top_k", 0, int64_t{1} << 30, top_k)) return *error;
  if (auto error = integer_field(body, "seed", 0, INT64_MAX, seed)) return *error;
  request.sampling.top_k = top_k;
  request.sampling.seed = static_cast<uint64_t>(seed);
  if (auto it = body.find("temperature"); it != body.end() && !it->is_null()) {
    if (!it->is_number() || !(it->get<double>() >= 0) || it->get<double>() > 1e6) {
      return bad("E1522", "temperature", "`temperature` must be a number in [0, 1e6], given " + json_excerpt(*it));
    }
    request.sampling.temperature = it->get<double>();
  }
  if (auto it = body.find("stream"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return bad("E1522", "stream", "`stream` must be true or false, given " + json_excerpt(*it));
    request.stream = it->get<bool>();
  }
  for (size_t i = 0; i < request.prompt_text.size(); ++i) {
    const int32_t token = generator.vocabulary->token_of[static_cast<uint8_t>(request.prompt_text[i])];
    if (token < 0) {
      return bad("E1523", "prompt",
                 "the prompt's byte " + std::to_string(i) + " (" + text_excerpt(request.prompt_text.substr(i, 1)) +
                     ") is not in the model's vocabulary");
    }
    request.prompt.push_back(token);
  }
  const int64_t needed = static_cast<int64_t>(request.prompt.size()) + request.max_tokens - 1;
  if (needed > context) {
    return bad("E1524", static_cast<int64_t>(request.prompt.size()) > context ? "prompt" : "max_tokens",
               "a prompt of " + std::to_string(request.prompt.size()) + " tokens and max_tokens " +
                   std::to_string(request.max_tokens) + " need " + std::to_string(needed) +
                   " positions; the model's context holds " + std::to_string(context));
  }
  return request;
}

}  // namespace presk::serve
