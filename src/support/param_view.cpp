// ParamView: guarded reads of a parameter's runs, a block of elements at a time.
#include "support/param_view.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "support/diagnostics.h"

namespace presk {

ParamView::ParamView(const std::vector<double>* values) : values_(values), size_(values ? values->size() : 0) {}

ParamView::ParamView(ElementType type, std::vector<ParamRun> runs, std::shared_ptr<const void> keep)
    : type_(type), runs_(std::move(runs)), keep_(std::move(keep)) {
  internal_assert(type == ElementType::f64 || type == ElementType::f32 || type == ElementType::bf16);
  for (const ParamRun& run : runs_) {
    internal_assert(run.entry->type == type);
    starts_.push_back(size_);
    size_ += run.entry->element_count;
  }
}

template <class Visit>
void ParamView::each_run(uint64_t begin, uint64_t count, Visit&& visit) const {
  internal_assert(begin <= size_ && count <= size_ - begin);
  size_t r = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin()) - 1;
  uint64_t done = 0;
  while (done < count) {
    const ParamRun& run = runs_[r];
    const uint64_t first = begin + done - starts_[r];
    const uint64_t n = std::min(count - done, run.entry->element_count - first);
    visit(run, first, n, done);
    done += n;
    ++r;
  }
}

void ParamView::read_stored(uint64_t begin, uint64_t count, std::byte* out) const {
  if (values_) {
    internal_assert(begin <= size_ && count <= size_ - begin);
    std::memcpy(out, values_->data() + begin, count * sizeof(double));
    return;
  }
  const uint64_t width = storage_bytes(type_, 1);
  each_run(begin, count, [&](const ParamRun& run, uint64_t first, uint64_t n, uint64_t before) {
    run.file->copy_bytes(*run.entry, first * width, out + before * width, n * width);
  });
}

void ParamView::read(uint64_t begin, uint64_t count, double* out) const {
  if (values_ || type_ == ElementType::f64) {
    read_stored(begin, count, reinterpret_cast<std::byte*>(out));
    return;
  }
  constexpr uint64_t kBlock = 4096;
  std::byte stored[kBlock * 4];
  for (uint64_t done = 0; done < count; done += kBlock) {
    const uint64_t n = std::min(kBlock, count - done);
    read_stored(begin + done, n, stored);
    if (type_ == ElementType::bf16) {  // the common types in a loop of their own (vectorized)
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t half;
        std::memcpy(&half, stored + 2 * i, 2);
        out[done + i] = std::bit_cast<float>(static_cast<uint32_t>(half) << 16);
      }
    } else if (type_ == ElementType::f32) {
      for (uint64_t i = 0; i < n; ++i) {
        float single;
        std::memcpy(&single, stored + 4 * i, 4);
        out[done + i] = single;
      }
    } else {
      for (uint64_t i = 0; i < n; ++i) out[done + i] = load_element(type_, stored, i);
    }
  }
}

std::vector<double> ParamView::widened() const {
  std::vector<double> values(size_);
  read(0, size_, values.data());
  return values;
}

}  // namespace presk
