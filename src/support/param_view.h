// A parameter's values where they are: the runs of a safetensors file's tensors that hold them
// (a stacked parameter's layers are one tensor each, in layer order), read in place through the
// file's guarded copies and never widened as a whole, or binary64 values held elsewhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk {

// One tensor of a file: a run of consecutive elements of the parameter.
struct ParamRun {
  const SafetensorsFile* file = nullptr;
  const SafetensorsEntry* entry = nullptr;
};

class ParamView {
 public:
  ParamView() = default;  // absent
  // Binary64 values held by the caller (nullptr: absent). Implicit, so that a source that
  // hands out `const std::vector<double>*` is a source of views.
  ParamView(const std::vector<double>* values);  // NOLINT(google-explicit-constructor)
  // The runs, all of float type `type`; `keep` keeps their files open (and mapped).
  ParamView(ElementType type, std::vector<ParamRun> runs, std::shared_ptr<const void> keep);

  explicit operator bool() const { return values_ != nullptr || !runs_.empty(); }
  // The stored type: f64 for binary64 values, else the runs' (f32 or bf16 or f64).
  ElementType type() const { return type_; }
  uint64_t size() const { return size_; }
  // The binary64 values when the view holds them, else nullptr.
  const std::vector<double>* values() const { return values_; }

  // Elements [begin, begin + count) as binary64 (each exact), into out.
  void read(uint64_t begin, uint64_t count, double* out) const;
  // The stored bytes of the same elements (storage_bytes(type(), count) bytes), into out.
  void read_stored(uint64_t begin, uint64_t count, std::byte* out) const;
  // Every element as binary64: a copy, for a reader that asks for one.
  std::vector<double> widened() const;
  // Calls visit(first, values, count) over the elements in order, a block of binary64 values
  // at a time (no whole copy).
  template <class Visit>
  void for_each_block(Visit&& visit) const {
    constexpr uint64_t kBlock = 4096;
    double block[kBlock];
    for (uint64_t begin = 0; begin < size_; begin += kBlock) {
      const uint64_t count = std::min(kBlock, size_ - begin);
      read(begin, count, block);
      visit(begin, static_cast<const double*>(block), count);
    }
  }

 private:
  // Calls visit(run, first element in the run, count, elements before) for the runs that
  // [begin, begin + count) touches.
  template <class Visit>
  void each_run(uint64_t begin, uint64_t count, Visit&& visit) const;

  const std::vector<double>* values_ = nullptr;
  ElementType type_ = ElementType::f64;
  std::vector<ParamRun> runs_;
  std::vector<uint64_t> starts_;  // the first element of each run
  uint64_t size_ = 0;
  std::shared_ptr<const void> keep_;
};

}  // namespace presk
