// The exact outputs' cache (exact_cache.h). The file is a safetensors file: one I64 tensor per
// sample and result, `s{k}.r{r}`, and in its metadata the format, the key, each result's kind
// and shape, and the SHA-256 of the tensors' bytes in that order. A real result holds per
// element 2 + ⌈bits/64⌉ words: the class (±0, ±∞, NaN, ± a regular number), the exponent, and
// MPFR's significand limbs, least significant first; an integer or boolean result its values.
#include "precision/exact_cache.h"

#include <mpfr.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/diagnostics.h"
#include "support/ranks.h"
#include "support/safetensors.h"
#include "support/sha256.h"

namespace presk::precision {
namespace {

using Exact = reference::Value<reference::MpfrArith>;
static_assert(sizeof(mp_limb_t) == sizeof(int64_t) && GMP_NUMB_BITS == 64, "64-bit limbs");

constexpr const char* kFormat = "presk exact outputs 1";
enum Class : int64_t { kPlusZero, kMinusZero, kPlusInf, kMinusInf, kNaN, kPositive, kNegative };

// A reason the file is not used.
struct Ignored {
  std::string why;
};

int64_t limbs_of(long bits) { return (bits + 63) / 64; }

const char* kind_name(ir::ElemKind kind) {
  return kind == ir::ElemKind::Real ? "R" : kind == ir::ElemKind::Int ? "Z" : "B";
}

Tensor encode(const Exact& value, long bits) {
  if (!value.is_real()) {
    Tensor tensor(ElementType::i64, {value.size()});
    std::memcpy(tensor.data(), value.integers.data(), value.integers.size() * sizeof(int64_t));
    return tensor;
  }
  const int64_t limbs = limbs_of(bits), width = 2 + limbs;
  Tensor tensor(ElementType::i64, {value.size() * width});
  int64_t* out = tensor.data_as<int64_t>();
  for (int64_t i = 0; i < value.size(); ++i, out += width) {
    const mpfr_srcptr x = value.real(i);
    internal_assert(mpfr_get_prec(x) == bits);
    const bool negative = mpfr_signbit(x) != 0;
    if (mpfr_nan_p(x)) {
      out[0] = kNaN;
    } else if (mpfr_inf_p(x)) {
      out[0] = negative ? kMinusInf : kPlusInf;
    } else if (mpfr_zero_p(x)) {
      out[0] = negative ? kMinusZero : kPlusZero;
    } else {
      out[0] = negative ? kNegative : kPositive;
      out[1] = mpfr_get_exp(x);
      std::memcpy(out + 2, mpfr_custom_get_significand(x), static_cast<size_t>(limbs) * sizeof(int64_t));
    }
  }
  return tensor;
}

// Sets `x` (of precision `bits`) from its words, each checked: a class, an exponent in MPFR's
// range and a normalized significand with no bit below the precision.
void decode_real(mpfr_ptr x, const int64_t* words, long bits) {
  const int64_t limbs = limbs_of(bits);
  switch (words[0]) {
    case kPlusZero: case kMinusZero: mpfr_set_zero(x, words[0] == kPlusZero ? 1 : -1); return;
    case kPlusInf: case kMinusInf: mpfr_set_inf(x, words[0] == kPlusInf ? 1 : -1); return;
    case kNaN: mpfr_set_nan(x); return;
    case kPositive: case kNegative: break;
    default: throw Ignored{"an element has an unknown class"};
  }
  uint64_t top = 0, low = 0;
  std::memcpy(&top, words + 2 + limbs - 1, sizeof top);
  std::memcpy(&low, words + 2, sizeof low);
  const int unused = static_cast<int>(limbs * 64 - bits);
  if ((top >> 63) == 0 || (unused > 0 && (low & ((uint64_t{1} << unused) - 1)) != 0)) {
    throw Ignored{"an element's significand is not normalized"};
  }
  mpfr_set_ui(x, 1, MPFR_RNDN);
  std::memcpy(mpfr_custom_get_significand(x), words + 2, static_cast<size_t>(limbs) * sizeof(int64_t));
  if (words[1] < mpfr_get_emin() || words[1] > mpfr_get_emax() || mpfr_set_exp(x, words[1]) != 0) {
    throw Ignored{"an element's exponent is out of range"};
  }
  if (words[0] == kNegative) mpfr_neg(x, x, MPFR_RNDN);
}

// The element count of a shape, or −1 when a dimension is negative or the product overflows.
int64_t checked_count(const reference::Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return -1;
  }
  return count;
}

Exact decode(const Tensor& tensor, const nlohmann::json& layout, long bits) {
  const std::string kind = layout.at("kind").get<std::string>();
  const reference::Shape shape = layout.at("shape").get<reference::Shape>();
  const int64_t count = checked_count(shape), width = kind == "R" ? 2 + limbs_of(bits) : 1;
  int64_t words = 0;
  if (count < 0 || __builtin_mul_overflow(count, width, &words) || tensor.element_count() != static_cast<uint64_t>(words) ||
      tensor.type() != ElementType::i64 || (kind != "R" && kind != "Z" && kind != "B")) {
    throw Ignored{"a result's size or kind is not its layout's"};
  }
  if (kind != "R") {
    Exact value = Exact::make_integer(kind == "Z" ? ir::ElemKind::Int : ir::ElemKind::Bool, shape);
    std::memcpy(value.integers.data(), tensor.data(), tensor.byte_size());
    return value;
  }
  const reference::MpfrArith arith(bits);
  Exact value = Exact::make_real(arith, shape);
  const int64_t* data = tensor.data_as<int64_t>();
  for (int64_t i = 0; i < count; ++i) decode_real(value.real(i), data + i * width, bits);
  return value;
}

std::string tensor_name(size_t sample, size_t result) {
  return "s" + std::to_string(sample) + ".r" + std::to_string(result);
}

// The file's outputs, every check passed; Ignored otherwise.
ExactOutputs read_checked(const ExactCache& cache, int64_t count, long bits) {
  const SafetensorsFile file = SafetensorsFile::open(cache.path);
  const auto& metadata = file.metadata();
  auto field = [&](const char* name) {
    const auto found = metadata.find(name);
    if (found == metadata.end()) throw Ignored{std::string("it has no `") + name + "`"};
    return found->second;
  };
  if (field("presk:exact:format") != kFormat) throw Ignored{"it is of another format"};
  if (field("presk:exact:key") != cache.key) throw Ignored{"it was computed for another program, weights, data, bindings, bits or samples"};
  const std::string layout_text = field("presk:exact:layout");
  const nlohmann::json layout = nlohmann::json::parse(layout_text);
  if (!layout.is_array() || static_cast<int64_t>(layout.size()) != count) throw Ignored{"it holds another number of samples"};
  Sha256 hash;
  hash.update(cache.key);
  hash.update(layout_text);
  std::vector<std::vector<Tensor>> tensors(layout.size());
  for (size_t k = 0; k < layout.size(); ++k) {
    for (size_t r = 0; r < layout[k].size(); ++r) {
      const SafetensorsEntry* entry = file.find(tensor_name(k, r));
      if (entry == nullptr) throw Ignored{"tensor " + tensor_name(k, r) + " is missing"};
      tensors[k].push_back(file.read(*entry));
      hash.update(tensors[k].back().data(), tensors[k].back().byte_size());
    }
  }
  if (hash.finish_hex() != field("presk:exact:sha256")) throw Ignored{"its bytes do not match their SHA-256 (a corrupt file)"};
  ExactOutputs outputs;
  outputs.bits = bits;
  for (size_t k = 0; k < layout.size(); ++k) {
    outputs.samples.emplace_back();
    for (size_t r = 0; r < layout[k].size(); ++r) outputs.samples[k].push_back(decode(tensors[k][r], layout[k][r], bits));
  }
  return outputs;
}

void pack_value(ranks::Packer& packer, const Exact& value, long bits) {
  packer.put<int32_t>(static_cast<int32_t>(value.kind)).put<uint64_t>(value.shape.size());
  for (int64_t d : value.shape) packer.put<int64_t>(d);
  packer.put<uint64_t>(value.elements.size());
  for (const Exact& element : value.elements) pack_value(packer, element, bits);
  if (!value.elements.empty()) return;
  const Tensor words = encode(value, bits);
  packer.put_string(std::string_view(reinterpret_cast<const char*>(words.data()), words.byte_size()));
}

Exact unpack_value(ranks::Unpacker& unpacker, long bits) {
  const auto kind = static_cast<ir::ElemKind>(unpacker.get<int32_t>());
  reference::Shape shape(unpacker.get<uint64_t>());
  for (int64_t& d : shape) d = unpacker.get<int64_t>();
  const auto elements = unpacker.get<uint64_t>();
  Exact value;
  for (uint64_t i = 0; i < elements; ++i) value.elements.push_back(unpack_value(unpacker, bits));
  if (elements > 0) {
    value.kind = kind;
    value.shape = std::move(shape);
    return value;
  }
  const std::string_view bytes = unpacker.get_string();
  Tensor words(ElementType::i64, {static_cast<int64_t>(bytes.size() / sizeof(int64_t))});
  std::memcpy(words.data(), bytes.data(), bytes.size());
  const nlohmann::json layout = {{"kind", kind_name(kind)}, {"shape", shape}};
  return decode(words, layout, bits);
}

}  // namespace

std::string encode_exact_sample(const std::vector<Exact>& sample, long bits) {
  ranks::Packer packer;
  packer.put<uint64_t>(sample.size());
  for (const Exact& value : sample) pack_value(packer, value, bits);
  return packer.take();
}

std::vector<Exact> decode_exact_sample(std::string_view bytes, long bits) {
  ranks::Unpacker unpacker(bytes);
  std::vector<Exact> sample(unpacker.get<uint64_t>());
  for (Exact& value : sample) value = unpack_value(unpacker, bits);
  return sample;
}

std::string exact_cache_path(const std::string& envelope_path) {
  const std::filesystem::path envelope(envelope_path);
  return (envelope.parent_path() / (envelope.filename().string() + ".exact.safetensors")).string();
}

namespace {

std::optional<ExactOutputs> read_here(const ExactCache& cache, int64_t count, long bits) {
  std::error_code error;
  if (!std::filesystem::exists(cache.path, error)) return std::nullopt;
  std::string why;
  try {
    return read_checked(cache, count, bits);
  } catch (const Ignored& ignored) {
    why = ignored.why;
  } catch (const UserError& bad) {  // a truncated or malformed safetensors file
    why = bad.diagnostics().front().message;
  } catch (const nlohmann::json::exception&) {
    why = "its layout is not valid JSON";
  }
  if (cache.note) cache.note("exact outputs: ignoring the cache " + cache.path + ": " + why + "; it is computed again and rewritten");
  return std::nullopt;
}

}  // namespace

// In a distributed run rank 0 reads the file (the one that writes it; the other ranks' nodes
// may not see it) and hands what it found to every rank, so that they all take the same path.
std::optional<ExactOutputs> read_exact_cache(const ExactCache& cache, int64_t count, long bits) {
  if (!ranks::distributed()) return read_here(cache, count, bits);
  ranks::Packer packer;
  if (ranks::rank() == 0) {
    const std::optional<ExactOutputs> found = read_here(cache, count, bits);
    packer.put<uint8_t>(found ? 1 : 0);
    for (size_t k = 0; found && k < found->samples.size(); ++k) {
      packer.put_string(found->samples[k].empty() ? std::string() : encode_exact_sample(found->samples[k], bits));
    }
  }
  const std::string bytes = ranks::from_rank0(packer.take());
  ranks::Unpacker unpacker(bytes);
  if (unpacker.get<uint8_t>() == 0) return std::nullopt;
  ExactOutputs outputs;
  outputs.bits = bits;
  for (int64_t k = 0; k < count; ++k) {
    const std::string_view sample = unpacker.get_string();
    outputs.samples.push_back(sample.empty() ? std::vector<Exact>() : decode_exact_sample(sample, bits));
  }
  return outputs;
}

void write_exact_cache(const ExactCache& cache, const ExactOutputs& outputs) {
  for (const auto& sample : outputs.samples) {
    for (const Exact& value : sample) {
      if (!value.elements.empty()) return;  // a tuple result: not cached
    }
  }
  nlohmann::json layout = nlohmann::json::array();
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  for (size_t k = 0; k < outputs.samples.size(); ++k) {
    if (outputs.samples[k].empty()) {  // not computed yet (exact_outputs_resumed): null
      layout.push_back(nullptr);
      continue;
    }
    nlohmann::json results = nlohmann::json::array();
    for (size_t r = 0; r < outputs.samples[k].size(); ++r) {
      const Exact& value = outputs.samples[k][r];
      results.push_back({{"kind", kind_name(value.kind)}, {"shape", value.shape}});
      tensors.push_back(encode(value, outputs.bits));
      names.push_back(tensor_name(k, r));
    }
    layout.push_back(std::move(results));
  }
  const std::string layout_text = layout.dump();
  Sha256 hash;
  hash.update(cache.key);
  hash.update(layout_text);
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) {
    hash.update(tensors[i].data(), tensors[i].byte_size());
    named.push_back({names[i], tensors[i]});
  }
  const std::map<std::string, std::string> metadata{{"presk:exact:format", kFormat},
                                                    {"presk:exact:key", cache.key},
                                                    {"presk:exact:layout", layout_text},
                                                    {"presk:exact:sha256", hash.finish_hex()}};
  try {
    write_safetensors(cache.path, named, metadata);
  } catch (const UserError& bad) {
    if (cache.note) cache.note("exact outputs: not cached in " + cache.path + ": " + bad.diagnostics().front().message);
  }
}

void complete_exact_outputs(const ExactCache* cache, ExactOutputs& all, const ir::Program& program,
                            const ir::Function& entry, const reference::ParameterStore& parameters,
                            const SampleInputs& inputs, int threads) {
  std::vector<int64_t> missing;
  for (int64_t k = 0; k < std::ssize(all.samples); ++k) {
    if (all.samples[k].empty()) missing.push_back(k);
  }
  const auto left = std::ssize(missing);
  const int64_t round = ranks::distributed()
      ? std::max<int64_t>(int64_t{ranks::size()} * std::max(1, threads), (left + 7) / 8)
      : left;
  for (int64_t first = 0; first < left; first += round) {
    const int64_t n = std::min(round, left - first);
    ExactOutputs part = run_exactly(program, entry, parameters, n,
                                    [&](int64_t i) { return inputs(missing[first + i]); }, all.bits, threads);
    for (int64_t i = 0; i < n; ++i) all.samples[missing[first + i]] = std::move(part.samples[i]);
    if (cache != nullptr) write_exact_cache(*cache, all);
  }
}

}  // namespace presk::precision
