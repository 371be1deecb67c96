// `presk data prepare`: turns a corpus (the King James Bible, or any text file) into a
// character vocabulary and the token files train.safetensors and val.safetensors
// (docs/data.md).
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/command.h"
#include "support/atomic_file.h"
#include "train/corpus.h"

namespace presk::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct DataPrepareOptions {
  std::string source = "kjv";
  std::string text_path;
  int64_t window = 0;
  double split = 0.9;
  std::string out_dir;
};

// Shows on stderr the stage that is running once it has run for a second, and the total
// time at the end when the whole command took more than a second.
class SlowStageReporter {
 public:
  SlowStageReporter() : started_(Clock::now()), watcher_([this] { watch(); }) {}
  ~SlowStageReporter() {
    {
      std::lock_guard lock(mutex_);
      finished_ = true;
    }
    wake_.notify_all();
    watcher_.join();
    double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    if (seconds > 1.0) std::cerr << fmt::format("presk data: done in {:.1f} s\n", seconds);
  }
  SlowStageReporter(const SlowStageReporter&) = delete;
  SlowStageReporter& operator=(const SlowStageReporter&) = delete;

  void stage(const std::string& what) {
    std::lock_guard lock(mutex_);
    stage_ = what;
    stage_started_ = Clock::now();
    shown_ = false;
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return finished_; })) {
      if (shown_ || stage_.empty() || Clock::now() - stage_started_ < std::chrono::seconds(1)) {
        continue;
      }
      std::cerr << "presk data: " << stage_ << "...\n";
      shown_ = true;
    }
  }

  Clock::time_point started_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string stage_;
  Clock::time_point stage_started_;
  bool shown_ = false;
  bool finished_ = false;
  std::thread watcher_;  // last: starts once the members it reads exist
};

// `text` as one shell word (quoted only when it needs to be).
std::string shell_word(const std::string& text) {
  bool plain = !text.empty() && text.find_first_not_of(
                                    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                    "OPQRSTUVWXYZ0123456789_./-+=:,") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The command recorded in the files: what decides their content, not where they go.
std::string canonical_command(const DataPrepareOptions& options) {
  std::string source = options.text_path.empty() ? "--source " + options.source
                                                 : "--text " + shell_word(options.text_path);
  return fmt::format("presk data prepare {} --window {} --split {}", source, options.window,
                     options.split);
}

nlohmann::json result_as_json(const train::PrepareResult& result,
                              const DataPrepareOptions& options) {
  nlohmann::json files = nlohmann::json::array();
  for (const train::PreparedPart& part : result.parts) {
    files.push_back({{"part", part.name},
                     {"path", part.path},
                     {"begin", part.begin},
                     {"end", part.end},
                     {"windows", part.windows},
                     {"unused_tokens", part.unused},
                     {"sha256", part.file_sha256}});
  }
  return {{"source", result.source},
          {"source_bytes", result.source_bytes},
          {"source_sha256", result.source_sha256},
          {"vocabulary", nlohmann::json::parse(train::vocabulary_json(result.vocabulary))},
          {"vocabulary_size", result.vocabulary.size()},
          {"window", options.window},
          {"split", options.split},
          {"files", files}};
}

void print_table(const train::PrepareResult& result, const DataPrepareOptions& options) {
  std::cout << fmt::format("source      {} ({} bytes, sha256 {})\n", result.source,
                           result.source_bytes, result.source_sha256);
  std::cout << fmt::format("vocabulary  {} characters {}\n", result.vocabulary.size(),
                           train::vocabulary_json(result.vocabulary));
  for (const train::PreparedPart& part : result.parts) {
    std::cout << fmt::format("{:<10}  {}: characters [{}, {}), {} window{} of {} tokens\n",
                             part.name, part.path, part.begin, part.end, part.windows,
                             part.windows == 1 ? "" : "s", options.window + 1);
  }
}

int run_prepare(const DataPrepareOptions& options, const GlobalOptions& global) {
  const std::string folder = options.out_dir.empty() || options.out_dir.back() == '/' ? options.out_dir : options.out_dir + "/";
  check_output_files({{"--out-dir", folder + "train.safetensors"}, {"--out-dir", folder + "val.safetensors"}},
                     {{"--text", options.text_path}});
  train::PrepareResult result;
  {
    SlowStageReporter reporter;
    reporter.stage("reading the corpus");
    train::CorpusText text =
        options.text_path.empty() ? train::read_kjv() : train::read_text_file(options.text_path);
    train::PrepareOptions prepare{options.window, options.split, options.out_dir,
                                  canonical_command(options),
                                  [&reporter](const std::string& what) { reporter.stage(what); }};
    result = train::prepare_corpus(text, prepare);
  }
  if (options.text_path.empty() && result.source_sha256 != train::kKjvSha256) {
    std::cerr << "presk data: note: this bible-kjv gives other bytes than version 4.38 "
                 "(docs/data.md); results will differ from the documented ones\n";
  }
  if (global.json)
    std::cout << result_as_json(result, options).dump(2) << std::endl;
  else
    print_table(result, options);
  return 0;
}

Registration registration("data", 70, [](CLI::App& app, GlobalOptions& global) {
  auto options = std::make_shared<DataPrepareOptions>();
  CLI::App* data = app.add_subcommand("data", "Prepare the corpus a model trains on");
  data->require_subcommand(1);
  CLI::App* prepare = data->add_subcommand(
      "prepare", "Turn a text into a character vocabulary and train/val token files");
  CLI::Option* source =
      prepare
          ->add_option("--source", options->source, "A built-in corpus: kjv (the King James Bible)")
          ->check(CLI::IsMember({"kjv"}))
          ->capture_default_str();
  prepare->add_option("--text", options->text_path, "Any text file instead of --source")
      ->excludes(source);
  prepare
      ->add_option("--window", options->window,
                   "Tokens each sample predicts (W; a window holds W+1)")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  prepare
      ->add_option("--out-dir", options->out_dir,
                   "Folder for train.safetensors and val.safetensors")
      ->required();
  prepare->add_option("--split", options->split, "Fraction of the characters that train gets")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  add_json_option(*prepare, global);
  return [options, &global] { return run_prepare(*options, global); };
});

}  // namespace
}  // namespace presk::cli
