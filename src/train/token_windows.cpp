// The token windows of a training run (token_windows.h).
#include "train/token_windows.h"

#include <cstring>

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

std::string TokenWindows::source_sha256() const {
  auto found = file_.metadata().find("source_sha256");
  return found == file_.metadata().end() ? std::string() : found->second;
}

Tensor TokenWindows::row(int64_t index) const {
  internal_assert(index >= 0 && index < count_);
  std::span<const std::byte> bytes = file_.raw_bytes(entry_);
  Tensor out(ElementType::i64, {width_});
  const size_t first = static_cast<size_t>(index * width_) * 4;
  for (int64_t k = 0; k < width_; ++k) {
    uint32_t word = 0;
    std::memcpy(&word, bytes.data() + first + static_cast<size_t>(k) * 4, 4);  // little-endian host
    out.set_integer(static_cast<uint64_t>(k), static_cast<int32_t>(word));
  }
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
