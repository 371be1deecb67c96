// The server (serve.h): cpp-httplib's thread pool runs the handlers; admission counts the
// requests in flight (workers + queue, else 503), a counting gate lets `workers` generate at
// once, and a signal thread drains on SIGTERM/SIGINT before it stops the server.
#include "serve/serve.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>
#include <variant>

#include "support/diagnostics.h"

namespace presk::serve {
namespace {

// At most `limit` holders at once; the others wait.
class Gate {
 public:
  explicit Gate(int limit) : free_(limit) {}
  void enter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void leave() {
    {
      std::lock_guard lock(mutex_);
      ++free_;
    }
    changed_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int free_;
};

// Requests admitted and not finished; draining refuses new ones.
class Admission {
 public:
  explicit Admission(int limit) : limit_(limit) {}
  bool admit() {
    std::lock_guard lock(mutex_);
    if (draining_ || in_flight_ >= limit_) return false;
    ++in_flight_;
    return true;
  }
  void finish() {
    {
      std::lock_guard lock(mutex_);
      --in_flight_;
    }
    idle_.notify_all();
  }
  void drain() {
    std::unique_lock lock(mutex_);
    draining_ = true;
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }
  bool draining() {
    std::lock_guard lock(mutex_);
    return draining_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int limit_, in_flight_ = 0;
  bool draining_ = false;
};

std::string completion_id() {
  static std::atomic<uint64_t> next{0};
  return "cmpl-" + std::to_string(next.fetch_add(1) + 1);
}

nlohmann::json choice(const std::string& text, const char* finish) {
  return {{"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish ? nlohmann::json(finish) : nlohmann::json()}};
}

struct Server {
  const Generator& generator;
  const ServeOptions& options;
  httplib::Server http;
  Admission admission;
  Gate gate;

  Server(const Generator& g, const ServeOptions& o) : generator(g), options(o), admission(o.workers + o.queue), gate(o.workers) {}

  void reply_error(httplib::Response& response, int status, const RequestError& error, const std::string& type) {
    response.status = status;
    response.set_content(error_body(error, type).dump(), "application/json");
  }

  // Generates `request`, calling on_token with each token's text; returns the whole text.
  std::string run(const CompletionRequest& request, const std::function<bool(const std::string&)>& on_token) {
    gate.enter();
    std::string text;
    try {
      auto stepper = generator.stepper();
      generate::generate(*stepper, request.prompt, request.max_tokens, request.sampling, [&](int64_t token) {
        const std::string piece = generator.vocabulary->decode(token);
        text += piece;
        return !on_token || on_token(piece);
      });
    } catch (...) {
      gate.leave();
      throw;
    }
    gate.leave();
    return text;
  }

  nlohmann::json completion(const std::string& id, const CompletionRequest& request, const std::string& text) {
    const auto created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const auto completion_tokens = static_cast<int64_t>(text.size());
    return {{"id", id}, {"object", "text_completion"}, {"created", created}, {"model", options.model_name},
            {"choices", {choice(text, "length")}},
            {"usage", {{"prompt_tokens", request.prompt.size()}, {"completion_tokens", completion_tokens},
                       {"total_tokens", static_cast<int64_t>(request.prompt.size()) + completion_tokens}}}};
  }

  void completions(const httplib::Request& http_request, httplib::Response& response) {
    auto parsed = parse_completion(http_request.body, generator);
    if (auto* error = std::get_if<RequestError>(&parsed)) return reply_error(response, 400, *error, "invalid_request_error");
    if (!admission.admit()) {
      const bool draining = admission.draining();
      return reply_error(response, 503,
                         {"E1526", "", draining ? "the server is shutting down" : "the server is busy: every worker and queue place is taken; retry later"},
                         "server_busy");
    }
    const auto request = std::make_shared<CompletionRequest>(std::get<CompletionRequest>(std::move(parsed)));
    const std::string id = completion_id();
    if (!request->stream) {
      try {
        response.set_content(completion(id, *request, run(*request, nullptr)).dump(), "application/json");
      } catch (const std::exception& error) {
        reply_error(response, 500, {"E1527", "", error.what()}, "server_error");
      }
      admission.finish();
      return;
    }
    response.set_header("Cache-Control", "no-cache");
    response.set_chunked_content_provider(
        "text/event-stream",
        [this, request, id](size_t, httplib::DataSink& sink) {
          auto event = [&](const nlohmann::json& data) {
            const std::string line = "data: " + data.dump() + "\n\n";
            return sink.write(line.data(), line.size());
          };
          auto chunk = [&](const std::string& text, const char* finish) {
            return nlohmann::json{{"id", id}, {"object", "text_completion"}, {"model", options.model_name}, {"choices", {choice(text, finish)}}};
          };
          try {
            run(*request, [&](const std::string& piece) { return event(chunk(piece, nullptr)); });
            event(chunk("", "length"));
          } catch (const std::exception& error) {
            event(error_body({"E1527", "", error.what()}, "server_error"));
          }
          const std::string done = "data: [DONE]\n\n";
          sink.write(done.data(), done.size());
          sink.done();
          return true;
        },
        [this](bool) { admission.finish(); });
  }

  void routes() {
    http.Get("/health", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(R"({"status":"ok"})", "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& response) {
      const nlohmann::json model = {{"id", options.model_name}, {"object", "model"}, {"owned_by", "presk"},
                                    {"context_length", generator.entry.context}, {"realization", generator.realization}};
      response.set_content(nlohmann::json{{"object", "list"}, {"data", {model}}}.dump(), "application/json");
    });
    http.Post("/v1/completions", [this](const httplib::Request& request, httplib::Response& response) { completions(request, response); });
    http.set_error_handler([](const httplib::Request&, httplib::Response& response) {
      if (!response.body.empty()) return;
      const RequestError error = response.status == 404
                                     ? RequestError{"E1528", "path", "no such route: GET /health, GET /v1/models, POST /v1/completions"}
                                     : RequestError{"E1527", "", "the request failed with status " + std::to_string(response.status)};
      response.set_content(error_body(error).dump(), "application/json");
    });
    http.set_payload_max_length(1 << 20);
    const int threads = options.workers + options.queue + 2;  // queued requests wait on a thread
    http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  }
};

}  // namespace

int serve(const Generator& generator, const ServeOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // every thread started from here blocks them; one waits
  Server server(generator, options);
  server.routes();
  const int port = options.port == 0 ? server.http.bind_to_any_port(options.host)
                                     : (server.http.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port < 0) {
    user_error("E1525").hint("choose another --port, or stop the process that holds it")
        << "cannot listen on " << options.host << ":" << options.port;
  }
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    signalled = true;
    std::cerr << "presk serve: " << (signal == SIGTERM ? "SIGTERM" : "SIGINT") << ": finishing the requests in flight\n";
    server.admission.drain();
    server.http.stop();
  });
  std::cerr << "presk serve: listening on http://" << options.host << ":" << port << std::endl;
  server.http.listen_after_bind();
  if (!signalled) kill(getpid(), SIGTERM);  // the server stopped by itself: release the waiter
  waiter.join();
  std::cerr << "presk serve: stopped\n";
  return 0;
}

}  // namespace presk::serve
