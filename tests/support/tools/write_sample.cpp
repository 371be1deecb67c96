// Writes a safetensors file with every element type and known values, and the values
// themselves (as Python-readable JSON) in the metadata key "expected", for
// tests/support/check_safetensors.py to compare against its own decoding.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <limits>

#include "support/diagnostics.h"
#include "support/safetensors.h"

namespace {

using presk::ElementType;

struct Sample {
  const char* name;
  ElementType type;
  std::vector<double> values;  // each exactly representable in `type`
};

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

const std::vector<Sample> kSamples = {
    {"f64", ElementType::f64, {0.1, -0.0, 1e300, -kInf, kNan, 5e-324}},
    {"f32", ElementType::f32, {double(0.1f), -2.5, 0x1.fffffep127, kInf, kNan, 0x1p-149}},
    {"bf16", ElementType::bf16, {1.0078125, -3.0, 0x1.fep127, -kInf, kNan, 0x1p-133}},
    {"i8", ElementType::i8, {-128, 127, 0, -1}},
    {"i4", ElementType::i4, {-8, -1, 0, 7, 3}},
    {"i32", ElementType::i32, {-2147483648.0, 2147483647.0, 12345}},
    {"i64", ElementType::i64, {-0x1p53, 0x1p53, 42}},
    {"u8", ElementType::u8, {0, 255, 128}},
    {"bool", ElementType::boolean, {0, 1, 1, 0}},
};

// Python's json reads NaN and Infinity; every finite double prints in its shortest form.
std::string python_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", value);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: support_write_sample OUT.safetensors\n";
    return 2;
  }
  try {
    std::vector<presk::Tensor> tensors;
    std::string expected = "{";
    for (const Sample& sample : kSamples) {
      presk::Tensor tensor(sample.type, {int64_t(sample.values.size())});
      expected += fmt::format("{}\"{}\": [", expected.size() > 1 ? ", " : "", sample.name);
      for (size_t i = 0; i < sample.values.size(); ++i) {
        tensor.set(i, sample.values[i]);
        expected += i == 0 ? "" : ", ";
        expected += python_number(sample.values[i]);
      }
      expected += "]";
      tensors.push_back(std::move(tensor));
    }
    std::vector<presk::NamedTensor> items;
    for (size_t i = 0; i < kSamples.size(); ++i) items.push_back({kSamples[i].name, tensors[i]});
    presk::write_safetensors(argv[1], items, {{"expected", expected + "}"}});
  } catch (const presk::UserError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
