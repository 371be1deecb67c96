// Dropout's training mask (support/dropout_mask.h).
#include "support/dropout_mask.h"

#include <cmath>

#include "support/random.h"

namespace presk::random {

std::string dropout_stream_name(std::string_view id, std::string_view module_path,
                                std::span<const int64_t> layers) {
  std::string name(id);
  name += '@';
  name += module_path;
  if (!layers.empty()) {
    name += '[';
    for (size_t d = 0; d < layers.size(); ++d) {
      if (d > 0) name += ',';
      name += std::to_string(layers[d]);
    }
    name += ']';
  }
  return name;
}

DropoutMask::DropoutMask(const DropoutKey& key, std::string_view id, std::string_view module_path,
                         std::span<const int64_t> layers, double rate)
    : rate_(rate) {
  const uint64_t step_key = word(key.seed, stream_of("dropout.step"), key.step);
  const uint64_t window_key = word(step_key, stream_of("dropout.window"), key.window);
  const uint64_t stream = stream_of(dropout_stream_name(id, module_path, layers));
  key_ = mix(window_key ^ mix(stream));  // word(window_key, stream, i) = mix(key_ + (i + 1)·φ)
  // q·2⁻⁵³ ≥ rate ⟺ q ≥ rate·2⁵³ (both exact) ⟺ q ≥ ⌈rate·2⁵³⌉ for integers q < 2⁵³.
  const double scaled = std::ceil(rate * 0x1p53);
  threshold_ = rate != rate ? UINT64_MAX : scaled <= 0 ? 0 : scaled >= 0x1p53 ? uint64_t{1} << 53 : static_cast<uint64_t>(scaled);
}

namespace {

// kept[j] = ⌊mix(counter + j·φ) / 2¹¹⌋ ≥ threshold for j < n: integer arithmetic only, so the
// clone for AVX-512 (eight words a vector) and the baseline give the same bits.
#if defined(__x86_64__)
__attribute__((target_clones("arch=x86-64-v4", "default")))
#endif
void keep_words(uint64_t counter, uint64_t threshold, size_t n, uint8_t* kept) {
  for (size_t j = 0; j < n; ++j) kept[j] = (mix(counter + j * 0x9E3779B97F4A7C15ull) >> 11) >= threshold;
}

}  // namespace

void DropoutMask::keep_run(uint64_t first, size_t n, uint8_t* kept) const {
  keep_words(key_ + (first + 1) * 0x9E3779B97F4A7C15ull, threshold_, n, kept);
}

bool DropoutMask::keep(uint64_t index) const {
  uint8_t kept = 0;
  keep_run(index, 1, &kept);
  return kept != 0;
}

}  // namespace presk::random
