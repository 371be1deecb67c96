// The step envelope's files (step_envelope.h): the JSON written in its documented order and read
// back field by field, and the companion safetensors file of the state, Δ, g and the batch.
#include "step/step_envelope.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/json_fields.h"
#include "support/json_reader.h"
#include "support/safetensors.h"
#include "support/sha256.h"

namespace presk::step {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

const char* const kTensorGroups[] = {"theta", "m", "v", "update", "gradient"};

std::string companion_name(const std::string& path) {
  std::filesystem::path file(path);
  if (file.extension() == ".json") file.replace_extension();
  return file.filename().string() + ".safetensors";
}

std::string companion_path(const std::string& path, const std::string& name) {
  return (std::filesystem::path(path).parent_path() / name).string();
}

// The values of group `g` (theta, m, v, update, gradient) of parameter k.
const std::vector<double>& group_values(const StepEnvelope& e, int g, size_t k) {
  const train::ParameterState& p = e.state.parameters[k];
  switch (g) {
    case 0: return p.theta;
    case 1: return p.m;
    case 2: return p.v;
    case 3: return e.update[k];
    default: return e.gradient[k];
  }
}

std::vector<double>& group_values(StepEnvelope& e, int g, size_t k) {
  return const_cast<std::vector<double>&>(group_values(static_cast<const StepEnvelope&>(e), g, k));
}

std::string companion_bytes(const StepEnvelope& e) {
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  for (int g = 0; g < 5; ++g) {
    for (size_t k = 0; k < e.state.parameters.size(); ++k) {
      const std::vector<double>& values = group_values(e, g, k);
      Tensor& t = tensors.emplace_back(ElementType::f64, e.state.parameters[k].shape);
      for (size_t i = 0; i < values.size(); ++i) t.set(i, values[i]);
      names.push_back(std::string(kTensorGroups[g]) + "/" + e.state.parameters[k].path);
    }
  }
  const int64_t width = e.windows.empty() ? 0 : static_cast<int64_t>(e.windows[0].element_count());
  Tensor& batch = tensors.emplace_back(ElementType::i64, std::vector<int64_t>{static_cast<int64_t>(e.windows.size()), width});
  for (size_t b = 0; b < e.windows.size(); ++b) {
    internal_assert(static_cast<int64_t>(e.windows[b].element_count()) == width);
    for (int64_t i = 0; i < width; ++i) batch.set_integer(b * width + i, e.windows[b].get_integer(i));
  }
  names.push_back("batch");
  std::vector<NamedTensor> named;
  for (size_t k = 0; k < tensors.size(); ++k) named.push_back({names[k], tensors[k]});
  return serialize_safetensors(named, {{"kind", "presk step envelope companion"}, {"format", "1"}});
}

ordered envelope_json(const StepEnvelope& e, const std::string& companion_sha256) {
  ordered parameters = ordered::array();
  for (const train::ParameterState& p : e.state.parameters) {
    parameters.push_back({{"path", p.path}, {"shape", p.shape}, {"stack_depth", p.stack_depth}});
  }
  ordered state = {{"weights", e.weights}, {"weights_sha256", e.weights_sha256}, {"data", e.data},
                   {"data_sha256", e.data_sha256}, {"warmup_steps", e.warmup_steps}, {"batch", e.batch},
                   {"seed", e.seed}, {"steps", e.steps}, {"schedule", train::schedule_name(e.schedule.kind)},
                   {"lr", e.schedule.peak}, {"min_lr", e.schedule.floor}, {"lr_warmup", e.schedule.warmup},
                   {"beta1", e.adamw.beta1}, {"beta2", e.adamw.beta2}, {"epsilon", e.adamw.epsilon},
                   {"weight_decay", e.adamw.weight_decay}, {"dropout", e.dropout}, {"remat", e.remat}};
  return {{"format", kStepEnvelopeFormat}, {"kind", kStepEnvelopeKind}, {"program", e.program},
          {"program_hash", e.program_hash}, {"entry", e.entry}, {"bindings", e.bindings}, {"bits", e.bits},
          {"yardstick", yardstick_name(e.yardstick)}, {"state", state}, {"step", e.step}, {"learning_rate", json_number<ordered>(e.learning_rate)},
          {"rows", e.rows}, {"next_rows", e.next_rows},
          {"norms", {{"theta", json_number<ordered>(e.theta_norm)}, {"update", json_number<ordered>(e.update_norm)},
                     {"gradient", json_number<ordered>(e.gradient_norm)}}},
          {"storage_floors", {{"f64", json_number<ordered>(e.floors.f64)}, {"f32", json_number<ordered>(e.floors.f32)},
                              {"bf16", json_number<ordered>(e.floors.bf16)}}},
          {"sampling_noise", json_number<ordered>(e.sampling_noise)}, {"sampling_noise_arithmetic", "native f64"},
          {"exact_seconds", e.exact_seconds}, {"parameters", parameters}, {"companion", e.companion},
          {"companion_sha256", companion_sha256}};
}

// The envelope's fields: E1255 naming the file and the field (support/json_fields.h).
const JsonFileKind kEnvelopeKind{"step envelope", "E1255", "calibrate the step again: presk calibrate --step … --out STEP.json",
                                 kStepEnvelopeFormat, nullptr};

std::vector<int64_t> integers(const JsonFields& f, const json& object, const std::string& name, const std::string& where = "") {
  std::vector<int64_t> out;
  for (const json& item : f.array(object, name, where)) {
    if (!item.is_number_integer()) f.fail(JsonFields::join(where, name), "holds " + json_excerpt(item) + ", not an integer");
    out.push_back(item.get<int64_t>());
  }
  return out;
}

void read_state_options(const JsonFields& f, const json& s, StepEnvelope& e) {
  const std::string w = "state";
  e.weights = f.text(s, "weights", w);
  e.weights_sha256 = f.text(s, "weights_sha256", w);
  e.data = f.text(s, "data", w);
  e.data_sha256 = f.text(s, "data_sha256", w);
  e.warmup_steps = f.integer(s, "warmup_steps", 1, w);
  e.batch = f.integer(s, "batch", 1, w);
  if (!f.field(s, "seed", w).is_number_unsigned()) f.fail("state.seed", "is not a whole number ≥ 0");
  e.seed = s["seed"].get<uint64_t>();
  e.steps = f.integer(s, "steps", 1, w);
  const auto kind = train::schedule_from_name(f.text(s, "schedule", w));
  if (!kind) f.fail("state.schedule", "is neither cosine nor constant");
  e.schedule = {*kind, f.number(s, "lr", w), f.number(s, "min_lr", w), f.integer(s, "lr_warmup", 0, w), e.steps};
  e.adamw = {f.number(s, "beta1", w), f.number(s, "beta2", w), f.number(s, "epsilon", w), f.number(s, "weight_decay", w)};
  e.dropout = f.text(s, "dropout", w);
  if (e.dropout != "program") {  // a rate the commands read back with std::stod: checked here, once
    char* end = nullptr;
    const double rate = std::strtod(e.dropout.c_str(), &end);
    if (e.dropout.empty() || end != e.dropout.c_str() + e.dropout.size() || !(rate >= 0 && rate < 1)) {
      f.fail("state.dropout", "is neither \"program\" nor a rate in [0, 1)");
    }
  }
  e.remat = f.text(s, "remat", w);
}

void read_json_fields(const JsonFields& f, const json& r, StepEnvelope& e) {
  f.check_format(r);
  if (f.text(r, "kind", "") != kStepEnvelopeKind) f.fail("kind", std::string("is not \"") + kStepEnvelopeKind + "\"");
  e.program = f.text(r, "program", "");
  e.program_hash = f.text(r, "program_hash", "");
  e.entry = f.text(r, "entry", "");
  for (const auto& [name, value] : f.object(r, "bindings", "").items()) {
    if (!value.is_string()) f.fail("bindings." + name, "is not a string");
    e.bindings[name] = value.get<std::string>();
  }
  e.bits = static_cast<long>(f.integer(r, "bits", 53, ""));
  if (r.contains("yardstick")) {  // absent: an envelope of before the native f64 yardstick, exact
    const std::string yardstick = f.text(r, "yardstick", "");
    if (yardstick != "exact" && yardstick != "native f64") f.fail("yardstick", "is neither \"exact\" nor \"native f64\"");
    e.yardstick = yardstick == "exact" ? Yardstick::exact : Yardstick::native_f64;
  }
  read_state_options(f, f.object(r, "state", ""), e);
  e.step = f.integer(r, "step", 2, "");
  e.learning_rate = f.number(r, "learning_rate", "");
  e.rows = integers(f, r, "rows");
  e.next_rows = integers(f, r, "next_rows");
  const json& norms = f.object(r, "norms", "");
  e.theta_norm = f.number(norms, "theta", "norms");
  e.update_norm = f.number(norms, "update", "norms");
  e.gradient_norm = f.number(norms, "gradient", "norms");
  const json& floors = f.object(r, "storage_floors", "");
  e.floors = {f.number(floors, "f64", "storage_floors"), f.number(floors, "f32", "storage_floors"),
              f.number(floors, "bf16", "storage_floors")};
  e.sampling_noise = f.number(r, "sampling_noise", "");
  e.exact_seconds = f.number(r, "exact_seconds", "");
  e.companion = f.text(r, "companion", "");
  for (const json& p : f.array(r, "parameters", "")) {
    train::ParameterState& state = e.state.parameters.emplace_back();
    state.path = f.text(p, "path", "parameters[]");
    state.shape = integers(f, p, "shape", "parameters[]");
    state.stack_depth = static_cast<int>(f.integer(p, "stack_depth", 0, "parameters[]"));
  }
  e.state.step = e.step - 1;
  if (static_cast<int64_t>(e.rows.size()) != e.batch) f.fail("rows", "does not hold `state.batch` rows");
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  user_error("E1253").hint("the companion file belongs beside its step envelope, unchanged; calibrate the step again")
      << "the step envelope's companion `" << path << "` " << what;
}

void read_companion(const std::string& path, const std::string& sha256, StepEnvelope& e) {
  if (!std::filesystem::is_regular_file(path)) corrupt(path, "is missing");
  if (sha256_file(path) != sha256) corrupt(path, "is not the one the envelope recorded (its SHA-256 differs)");
  const SafetensorsFile file = SafetensorsFile::open(path);
  e.update.assign(e.state.parameters.size(), {});
  e.gradient.assign(e.state.parameters.size(), {});
  for (int g = 0; g < 5; ++g) {
    for (size_t k = 0; k < e.state.parameters.size(); ++k) {
      const train::ParameterState& p = e.state.parameters[k];
      const std::string name = std::string(kTensorGroups[g]) + "/" + p.path;
      const SafetensorsEntry* entry = file.find(name);
      if (!entry || entry->shape != p.shape || entry->type != ElementType::f64) corrupt(path, "has no F64 tensor `" + name + "` of shape " + format_shape(p.shape));
      const Tensor t = file.read(*entry);
      std::vector<double>& values = group_values(e, g, k);
      values.resize(t.element_count());
      for (size_t i = 0; i < values.size(); ++i) values[i] = t.get(i);
    }
  }
  const SafetensorsEntry* batch = file.find("batch");
  if (!batch || batch->type != ElementType::i64 || batch->shape.size() != 2 || batch->shape[0] != e.batch) {
    corrupt(path, "has no I64 tensor `batch` of " + std::to_string(e.batch) + " windows");
  }
  const Tensor rows = file.read(*batch);
  for (int64_t b = 0; b < batch->shape[0]; ++b) {
    Tensor& row = e.windows.emplace_back(ElementType::i64, std::vector<int64_t>{batch->shape[1]});
    for (int64_t i = 0; i < batch->shape[1]; ++i) row.set_integer(i, rows.get_integer(b * batch->shape[1] + i));
  }
}

}  // namespace

const char* yardstick_name(Yardstick y) { return y == Yardstick::exact ? "exact" : "native f64"; }

void write_step_envelope(StepEnvelope& envelope, const std::string& path) {
  envelope.companion = companion_name(path);
  const std::string bytes = companion_bytes(envelope);
  write_file_atomically(companion_path(path, envelope.companion), bytes);
  write_file_atomically(path, envelope_json(envelope, sha256_hex(bytes)).dump(1) + "\n");
}

StepEnvelope read_step_envelope(const std::string& path) {
  const std::string text = read_input_file(
      path, {"step envelope", "E1254", "check the path; `presk calibrate --step … --out STEP.json` writes one", kJsonFileLimit});
  const json root = parse_user_json(text, {path, "E1254", "the file is truncated or not a step envelope; calibrate again"});
  const JsonFields fields(path, kEnvelopeKind);
  StepEnvelope envelope;
  read_json_fields(fields, root, envelope);
  read_companion(companion_path(path, envelope.companion), fields.text(root, "companion_sha256", ""), envelope);
  return envelope;
}

}  // namespace presk::step
