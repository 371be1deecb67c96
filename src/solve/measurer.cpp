// The solve's measurements (measurer.h).
#include "solve/measurer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "solve/solution.h"

namespace presk::solve {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Measurer::Measurer(const ir::Program& program, const ir::Function& entry,
                   const reference::ParameterStore& parameters, SampleSet in_sample, SampleSet held_out,
                   long bits, int threads, Progress progress, const precision::ExactCache* cache)
    : program_(program), entry_(entry), parameters_(parameters), in_sample_(std::move(in_sample)),
      held_out_(std::move(held_out)), threads_(threads), progress_(std::move(progress)) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t in = in_sample_.count, total = in + held_out_.count;
  precision::ExactOutputs all;
  all.bits = bits;
  if (std::optional<precision::ExactOutputs> cached = cache != nullptr ? precision::read_exact_cache(*cache, total, bits)
                                                                         : std::nullopt) {
    all.samples = std::move(cached->samples);  // some may be missing: a run stopped midway
  }
  all.samples.resize(static_cast<size_t>(total));
  const auto from_cache = std::count_if(all.samples.begin(), all.samples.end(), [](const auto& s) { return !s.empty(); });
  const bool cached = from_cache == total;
  exact_from_cache_ = cached;
  if (progress_ && cached) progress_(fmt::format("exact outputs: from cache {}", cache->path));
  if (progress_ && !cached) {
    progress_(fmt::format("exact reference: {} samples in sample{} at {} bits{}", in,
                          held_out_.count > 0 ? fmt::format(" and {} held out", held_out_.count) : "", bits,
                          from_cache > 0 ? fmt::format(" ({} of them resumed from cache {})", from_cache, cache->path) : ""));
  }
  const precision::SampleInputs both = [&](int64_t k) {
    return k < in ? in_sample_.inputs(k) : held_out_.inputs(k - in);
  };
  precision::complete_exact_outputs(cache, all, program, entry, parameters, both, threads);
  exact_in_.bits = exact_out_.bits = bits;
  for (int64_t k = 0; k < total; ++k) {
    (k < in ? exact_in_ : exact_out_).samples.push_back(std::move(all.samples[k]));
  }
  exact_seconds_ = seconds_since(start);
  if (progress_ && !cached) progress_(fmt::format("exact reference: done in {:.1f} s", exact_seconds_));
}

precision::MeasuredGap Measurer::measure(const Offer& offer, const Assignment& assignment, bool held_out) {
  const auto key = std::make_pair(held_out, assignment);
  if (const auto found = cache_.find(key); found != cache_.end()) return found->second;
  const auto start = std::chrono::steady_clock::now();
  const SampleSet& set = held_out ? held_out_ : in_sample_;
  const precision::MeasuredGap gap =
      precision::measure_gap(program_, entry_, realization_of(offer, assignment), parameters_, set.count,
                             set.inputs, held_out ? exact_out_ : exact_in_, threads_, &prepared_);
  native_seconds_ += seconds_since(start);
  ++native_runs_;
  cache_.emplace(key, gap);
  return gap;
}

precision::MeasuredGap Measurer::in_sample(const Offer& offer, const Assignment& assignment) {
  return measure(offer, assignment, false);
}

std::optional<precision::MeasuredGap> Measurer::held_out(const Offer& offer, const Assignment& assignment) {
  if (held_out_.count == 0) return std::nullopt;
  return measure(offer, assignment, true);
}

}  // namespace presk::solve
