// From a text to token files: the character vocabulary, the train/val split, the windows
// of W + 1 tokens, and the two safetensors files with their metadata.
#include "train/corpus.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/tensor.h"
#include "support/sha256.h"

namespace presk::train {
namespace {

// A part of the text before it is written: its name and byte range.
struct PartRange {
  const char* name;
  uint64_t begin;
  uint64_t end;
  uint64_t size() const { return end - begin; }
};

// The number of windows of W + 1 tokens, stepping by W, that fit in `tokens` tokens.
int64_t window_count(uint64_t tokens, int64_t window) {
  return tokens <= static_cast<uint64_t>(window) ? 0 : static_cast<int64_t>((tokens - 1) / window);
}

// Train is the first floor(bytes x split) bytes, val the rest; each must hold a window.
std::vector<PartRange> split_text(uint64_t bytes, const PrepareOptions& options) {
  auto boundary = static_cast<uint64_t>(std::floor(static_cast<double>(bytes) * options.split));
  boundary = std::min(boundary, bytes);
  std::vector<PartRange> parts = {{"train", 0, boundary}, {"val", boundary, bytes}};
  for (const PartRange& part : parts) {
    if (window_count(part.size(), options.window) > 0) continue;
    uint64_t shortest = std::min(parts[0].size(), parts[1].size());
    user_error("E0704").hint(
        shortest >= 2 ? fmt::format("use --window {} or less, or a longer text", shortest - 1)
                      : std::string("use a --split further from 0 and 1, "
                                    "or a longer text"))
        << "the " << part.name << " part holds " << part.size() << " characters (of " << bytes
        << ", split " << options.split << "); a window of --window " << options.window << " needs "
        << options.window + 1;
  }
  return parts;
}

// Creates the output folder when missing and checks that files can be made in it.
void prepare_out_dir(const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  std::string why;
  if (error)
    why = error.message();
  else if (!std::filesystem::is_directory(out_dir, error))
    why = "it is not a folder";
  else if (::access(out_dir.c_str(), W_OK | X_OK) != 0)
    why = std::strerror(errno);
  if (why.empty()) return;
  user_error("E0705").hint("choose a folder you can write to with --out-dir")
      << "cannot write the token files to " << out_dir << ": " << why;
}

// The tokens of bytes [begin, begin + S*W + 1) as S rows of W + 1: row k starts at token kW,
// so consecutive rows share one token and every next-token pair appears exactly once.
Tensor make_windows(std::string_view text, const PartRange& part, int64_t window,
                    const Vocabulary& vocabulary) {
  int64_t rows = window_count(part.size(), window);
  Tensor tensor(ElementType::i32, {rows, window + 1});
  int32_t* out = tensor.data_as<int32_t>();
  for (int64_t row = 0; row < rows; ++row) {
    const char* first = text.data() + part.begin + row * window;
    for (int64_t position = 0; position <= window; ++position) {
      *out++ = vocabulary.token_of[static_cast<uint8_t>(first[position])];
    }
  }
  return tensor;
}

// The metadata every token file carries (docs/data.md lists the keys).
std::map<std::string, std::string> file_metadata(const PrepareResult& result, const PartRange& part,
                                                 int64_t windows, const PrepareOptions& options) {
  return {{"format", std::to_string(kTokenFileFormat)},
          {"part", part.name},
          {"vocabulary", vocabulary_json(result.vocabulary)},
          {"vocabulary_size", std::to_string(result.vocabulary.size())},
          {"source", result.source},
          {"source_bytes", std::to_string(result.source_bytes)},
          {"source_sha256", result.source_sha256},
          {"window", std::to_string(options.window)},
          {"stride", std::to_string(options.window)},
          {"split", fmt::format("{}", options.split)},
          {"part_begin", std::to_string(part.begin)},
          {"part_end", std::to_string(part.end)},
          {"windows", std::to_string(windows)},
          {"command", options.command}};
}

void report(const PrepareOptions& options, const std::string& stage) {
  if (options.progress) options.progress(stage);
}

}  // namespace

Vocabulary build_vocabulary(std::string_view text) {
  std::array<bool, 256> present{};
  for (char c : text) present[static_cast<uint8_t>(c)] = true;
  Vocabulary vocabulary;
  vocabulary.token_of.fill(-1);
  for (int byte = 0; byte < 256; ++byte) {
    if (!present[byte]) continue;
    vocabulary.token_of[byte] = vocabulary.size();
    vocabulary.characters.push_back(static_cast<uint8_t>(byte));
  }
  return vocabulary;
}

std::string vocabulary_json(const Vocabulary& vocabulary) {
  std::string json = "\"";
  for (uint8_t byte : vocabulary.characters) {
    switch (byte) {
      case '"':
        json += "\\\"";
        break;
      case '\\':
        json += "\\\\";
        break;
      case '\n':
        json += "\\n";
        break;
      case '\t':
        json += "\\t";
        break;
      case '\r':
        json += "\\r";
        break;
      default:
        if (byte >= 0x20 && byte <= 0x7e)
          json += static_cast<char>(byte);
        else
          json += fmt::format("\\u{:04x}", byte);
    }
  }
  return json + "\"";
}

PrepareResult prepare_corpus(const CorpusText& text, const PrepareOptions& options) {
  internal_assert(options.window >= 1);
  if (text.bytes.empty()) {
    user_error("E0703").hint("pass a text that holds the characters to train on")
        << "the text " << text.name << " is empty";
  }
  std::vector<PartRange> ranges = split_text(text.bytes.size(), options);
  prepare_out_dir(options.out_dir);

  report(options, "hashing and building the vocabulary");
  PrepareResult result;
  result.source = text.name;
  result.source_bytes = text.bytes.size();
  result.source_sha256 = sha256_hex(text.bytes);
  result.vocabulary = build_vocabulary(text.bytes);

  for (const PartRange& range : ranges) {
    report(options, fmt::format("writing {}.safetensors", range.name));
    Tensor windows = make_windows(text.bytes, range, options.window, result.vocabulary);
    PreparedPart part;
    part.name = range.name;
    part.path = (std::filesystem::path(options.out_dir) / (part.name + ".safetensors")).string();
    part.begin = range.begin;
    part.end = range.end;
    part.windows = windows.shape()[0];
    part.unused = range.size() - 1 - static_cast<uint64_t>(part.windows * options.window);
    std::string bytes = serialize_safetensors({{std::string(kTokensTensorName), windows}},
                                              file_metadata(result, range, part.windows, options));
    part.file_sha256 = sha256_hex(bytes);
    write_file_atomically(part.path, bytes);
    result.parts.push_back(std::move(part));
  }
  return result;
}

}  // namespace presk::train
