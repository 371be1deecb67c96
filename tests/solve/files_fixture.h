// Real files for a solve's envelope: mlp.psk's weights and a data file written from a seed, and
// an envelope calibrated on them (provenance_test.cpp, exact_cache_test.cpp).
#pragma once

#include <cstdint>

#include "solve/solve_fixture.h"
#include "support/safetensors.h"
#include "support/tensor.h"

namespace presk::solve_testing {

// A deterministic value in [−scale, scale) from (seed, index).
inline double value_of(uint64_t seed, uint64_t index, double scale) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return scale * (static_cast<double>(z >> 11) / 9007199254740992.0 * 2 - 1);
}

inline Tensor filled(ElementType type, std::vector<int64_t> shape, uint64_t seed, double scale) {
  Tensor tensor(type, std::move(shape));
  for (uint64_t i = 0; i < static_cast<uint64_t>(tensor.element_count()); ++i) tensor.set(i, value_of(seed, i, scale));
  return tensor;
}

// mlp.psk's parameters (In = 16, W = 32, K = 10) from `seed`.
inline std::string write_weights(testing_support::TempFolder& folder, const std::string& name, uint64_t seed) {
  const Tensor w = filled(ElementType::f64, {16, 32}, seed, 0.3), b = filled(ElementType::f64, {32}, seed + 1, 0.1);
  const Tensor out = filled(ElementType::f64, {32, 10}, seed + 2, 0.3), bias = filled(ElementType::f64, {10}, seed + 3, 0.1);
  const std::string path = folder.file(name);
  write_safetensors(path, {{"hidden.w", w}, {"hidden.b", b}, {"out", out}, {"bias", bias}});
  return path;
}

// `samples` samples of mlp.psk's loss at B = 4: x [S, 4, 16], labels [S, 4] in [0, 10).
inline std::string write_data(testing_support::TempFolder& folder, const std::string& name, int64_t samples, uint64_t seed) {
  const Tensor x = filled(ElementType::f64, {samples, 4, 16}, seed, 2);
  Tensor labels(ElementType::i64, {samples, 4});
  for (uint64_t i = 0; i < static_cast<uint64_t>(labels.element_count()); ++i) {
    labels.set(i, static_cast<double>(static_cast<int64_t>((value_of(seed + 7, i, 1) + 1) * 5) % 10));
  }
  const std::string path = folder.file(name);
  write_safetensors(path, {{"x", x}, {"labels", labels}});
  return path;
}

struct Files {
  testing_support::TempFolder folder;
  std::string program = example("mlp.psk"), weights, data, envelope;
  Files() {
    weights = write_weights(folder, "weights.safetensors", 1);
    data = write_data(folder, "data.safetensors", 7, 2);
    envelope = calibrate(folder, program, "loss", "--dim B=4 --samples 3 --weights " + weights + " --data " + data);
  }
};

}  // namespace presk::solve_testing
