// The token windows of a training run (token_windows.h).
#include "train/token_windows.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "support/diagnostics.h"
#include "support/random.h"
#include "train/corpus.h"

namespace presk::train {

TokenWindows::TokenWindows(const std::string& path, int64_t width, const std::string& role)
    : path_(path), file_(SafetensorsFile::open(path)), width_(width) {
  const SafetensorsEntry* entry = file_.find(kTokensTensorName);
  const std::string hint = "make it with `presk data prepare --window " +
                           std::to_string(width - 1) +
                           "` (a window of W + 1 tokens feeds an entry taking Z[T + 1] with T = W)";
  if (!entry) {
    user_error("E1000").hint(hint)
        << role << " `" << path << "` has no tensor `" << kTokensTensorName << "`";
  }
  if (entry->type != ElementType::i32 || entry->shape.size() != 2 || entry->shape[0] < 1 ||
      entry->shape[1] != width) {
    user_error("E1000").hint(hint)
        << role << " `" << path << "`: `" << kTokensTensorName << "` is " << type_name(entry->type)
        << " " << format_shape(entry->shape) << "; the entry reads windows of " << width
        << " tokens, i32 [S, " << width << "]";
  }
  entry_ = *entry;
  count_ = entry_.shape[0];
}

std::string TokenWindows::source_sha256() const { return metadata("source_sha256"); }

std::string TokenWindows::metadata(const std::string& key) const {
  auto found = file_.metadata().find(key);
  return found == file_.metadata().end() ? std::string() : found->second;
}

namespace {

// Calls `visit(index, token)` on every token of the file in order, a chunk at a time, until it
// returns false.
template <class Visit>
void each_token(const SafetensorsFile& file, const SafetensorsEntry& entry, Visit visit) {
  constexpr uint64_t kChunk = 1 << 16;  // tokens
  std::vector<int32_t> words(kChunk);
  for (uint64_t first = 0; first < entry.element_count; first += kChunk) {
    const uint64_t count = std::min(kChunk, entry.element_count - first);
    file.copy_bytes(entry, first * 4, words.data(), count * 4);  // little-endian host
    for (uint64_t k = 0; k < count; ++k) {
      if (!visit(first + k, words[k])) return;
    }
  }
}

}  // namespace

std::optional<TokenWindows::Token> TokenWindows::first_outside(int64_t size) const {
  std::optional<Token> found;
  each_token(file_, entry_, [&](uint64_t index, int32_t token) {
    if (token >= 0 && token < size) return true;
    const auto i = static_cast<int64_t>(index);
    found = Token{i / width_, i % width_, token};
    return false;
  });
  return found;
}

int64_t TokenWindows::largest() const {
  int64_t largest = std::numeric_limits<int64_t>::min();
  each_token(file_, entry_, [&](uint64_t, int32_t token) {
    largest = std::max<int64_t>(largest, token);
    return true;
  });
  return largest;
}

Tensor TokenWindows::row(int64_t index) const {
  internal_assert(index >= 0 && index < count_);
  std::vector<int32_t> words(static_cast<size_t>(width_));  // little-endian host
  file_.copy_bytes(entry_, static_cast<uint64_t>(index * width_) * 4, words.data(), words.size() * 4);
  Tensor out(ElementType::i64, {width_});
  for (int64_t k = 0; k < width_; ++k) out.set_integer(static_cast<uint64_t>(k), words[static_cast<size_t>(k)]);
  return out;
}

std::vector<int64_t> batch_rows(uint64_t seed, int64_t step, int64_t batch, int64_t windows) {
  internal_assert(step >= 0 && batch >= 1 && windows >= 1);
  const uint64_t stream = random::stream_of("train.windows");
  std::vector<int64_t> rows(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const uint64_t index =
        static_cast<uint64_t>(step) * static_cast<uint64_t>(batch) + static_cast<uint64_t>(b);
    rows[static_cast<size_t>(b)] =
        static_cast<int64_t>(random::word(seed, stream, index) % static_cast<uint64_t>(windows));
  }
  return rows;
}

std::vector<int64_t> validation_rows(int64_t windows, int64_t wanted) {
  if (wanted <= 0 || wanted > windows) wanted = windows;
  std::vector<int64_t> rows(static_cast<size_t>(wanted));
  for (int64_t k = 0; k < wanted; ++k) rows[static_cast<size_t>(k)] = k * windows / wanted;
  return rows;
}

}  // namespace presk::train
