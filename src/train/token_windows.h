// The windows a training run reads: a token file of `presk data prepare` (docs/data.md, I32
// `tokens` [S, W + 1]), and which of its rows each step's batch takes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::train {

class TokenWindows {
 public:
  // Opens `path` and checks it holds `tokens` I32 [S, `width`] with S ≥ 1 (E1000 naming what
  // differs; `role` is "--data" or "--val" in messages).
  TokenWindows(const std::string& path, int64_t width, const std::string& role);

  int64_t count() const { return count_; }  // S
  int64_t width() const { return width_; }  // W + 1
  const std::string& path() const { return path_; }
  // The file's `source_sha256` metadata (empty when absent): names the text it was made from.
  std::string source_sha256() const;
  // The metadata value `key` of the file (empty when absent), e.g. `vocabulary` (a JSON
  // string of the characters, token k the k-th) and `vocabulary_size` (docs/data.md).
  std::string metadata(const std::string& key) const;
  // Row `index` as an i64 tensor [W + 1] (the loss entry's `tokens` argument).
  Tensor row(int64_t index) const;
  // The first token (row-major) outside [0, size), or nullopt when every token is inside.
  struct Token {
    int64_t window = 0, position = 0, value = 0;
  };
  std::optional<Token> first_outside(int64_t size) const;
  // The largest token of the file.
  int64_t largest() const;

 private:
  std::string path_;
  SafetensorsFile file_;
  SafetensorsEntry entry_;
  int64_t count_ = 0;
  int64_t width_ = 0;
};

// The rows of step s's batch (s from 0), b = 0 … B − 1:
//   row_b = word(seed, stream_of("train.windows"), s·B + b) mod S
// (support/random.h): sampled with replacement, a pure function of (seed, s, b).
std::vector<int64_t> batch_rows(uint64_t seed, int64_t step, int64_t batch, int64_t windows);

// The validation rows: `wanted` rows evenly spread over S, row k = ⌊k·S / wanted⌋ (all S rows
// when wanted ≥ S or wanted is 0).
std::vector<int64_t> validation_rows(int64_t windows, int64_t wanted);

}  // namespace presk::train
