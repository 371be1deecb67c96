// Dropout's training mask: which elements a `dropout` let keeps in one window of one training
// step. A pure function of (seed, step, window, the dropout's id, the module path and layer
// indices of the call it runs in, element index), drawn from presk's counter-based generator
// (support/random.h), so the reference and the native executor, the forward pass and the
// vjp's adjoint, any order and any number of threads all see the same mask. Definition
// (docs/training.md, "Dropout"):
//   k_step   = word(seed, stream_of("dropout.step"), step)
//   k_window = word(k_step, stream_of("dropout.window"), window)
//   stream   = stream_of(id + "@" + module_path + layers)   layers: "" or "[l0,l1,…]"
//   keep(i)  = uniform01(word(k_window, stream, i)) ≥ rate
// A kept element becomes x / (1 − rate), a dropped one +0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace presk::random {

// Where a training run is: the key shared by every dropout mask of one window of one step.
struct DropoutKey {
  uint64_t seed = 0;
  uint64_t step = 0;    // the optimizer step, from 0
  uint64_t window = 0;  // the window's position in the step's batch, from 0
};

// The text that names one application of a dropout: "SelfAttention.apply/%12@blocks.attn[1]".
std::string dropout_stream_name(std::string_view id, std::string_view module_path,
                                std::span<const int64_t> layers);

class DropoutMask {
 public:
  // `id` is the dropout let's attrs.path (the site where the front end lowered it).
  DropoutMask(const DropoutKey& key, std::string_view id, std::string_view module_path,
              std::span<const int64_t> layers, double rate);

  // Whether element `index` (row-major in the let's shape) is kept.
  bool keep(uint64_t index) const;
  // keep(first + j) for j < n into kept[j] (1 or 0): the same test as an integer compare,
  // ⌊w / 2¹¹⌋ ≥ ⌈rate · 2⁵³⌉.
  void keep_run(uint64_t first, size_t n, uint8_t* kept) const;
  double rate() const { return rate_; }

 private:
  uint64_t key_ = 0;  // the words of this application are mix(key_ + (i + 1)·φ)
  double rate_ = 0;
  uint64_t threshold_ = 0;  // the least ⌊w / 2¹¹⌋ kept (2⁶⁴ − 1 for a NaN rate: none)
};

}  // namespace presk::random
