// Training checkpoints (checkpoint.h).
#include "train/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "ir/extent_fit.h"
#include "support/diagnostics.h"
#include "support/json_reader.h"
#include "support/safetensors.h"

namespace presk::train {
namespace {

const char* kMomentPrefix = "adam.";

Tensor tensor_of(const std::vector<double>& values, const std::vector<int64_t>& shape,
                 RealType master) {
  Tensor tensor(exec::native::element_type_of(master), shape);
  for (size_t i = 0; i < values.size(); ++i) tensor.set(i, values[i]);
  return tensor;
}

std::vector<double> values_of(const Tensor& tensor, RealType master) {
  std::vector<double> values(tensor.element_count());
  const ElementType type = exec::native::element_type_of(master);
  for (size_t i = 0; i < values.size(); ++i) values[i] = round_to(tensor.get(i), type);
  return values;
}

std::string generator_text(uint64_t seed, int64_t next_step) {
  return "{\"kind\": \"counter\", \"seed\": " + std::to_string(seed) +
         ", \"next_step\": " + std::to_string(next_step) + "}";
}

ir::Type type_of(const ParameterState& p) {
  ir::Type type;
  type.shape = p.shape;
  type.axes = p.axes;
  return type;
}

// Every mismatch between the file's tensors and the wanted ones (name → shape), at once.
void check_layout(const SafetensorsFile& file, const std::map<std::string, ir::Type>& wanted,
                  const std::string& dtype, bool ignore_moments, const ir::Program* program) {
  std::ostringstream problems;
  int count = 0;
  auto problem = [&](const std::string& text) {
    if (count++ < 8) problems << (count > 1 ? "; " : "") << text;
  };
  for (const auto& [name, type] : wanted) {
    const SafetensorsEntry* entry = file.find(name);
    if (!entry) {
      problem("no tensor `" + name + "`");
    } else if (entry->shape != type.shape) {
      const std::string fit = ir::extent_fit_note(type, entry->shape, program);
      problem("`" + name + "` is " + format_shape(entry->shape) + ", the program's is " +
              format_shape(type.shape) + (fit.empty() ? "" : ": " + fit));
    } else if (!dtype.empty() ? entry->file_dtype != dtype : !facts(entry->type).is_float) {
      problem("`" + name + "` is " + entry->file_dtype + ", not " +
              (dtype.empty() ? "a float dtype" : dtype));
    }
  }
  for (const SafetensorsEntry& entry : file.entries()) {
    if (ignore_moments && entry.name.rfind(kMomentPrefix, 0) == 0) continue;
    if (!wanted.count(entry.name))
      problem("tensor `" + entry.name + "` is not a parameter of the program");
  }
  if (count > 0) {
    user_error("E1006").hint(
        "a checkpoint holds exactly the parameters of the program it trained (presk dump "
        "--stage sites lists them); use one made for this program and realization")
        << "`" << file.name() << "` does not match the program's layout (" << count
        << (count == 1 ? " difference" : " differences") << "): " << problems.str();
  }
}

std::string metadata_value(const SafetensorsFile& file, const std::string& key) {
  auto found = file.metadata().find(key);
  if (found == file.metadata().end()) {
    user_error("E1004").hint("pass a checkpoint written by `presk train --out`")
        << "`" << file.name() << "` is not a presk training checkpoint: its metadata has no `"
        << key << "`";
  }
  return found->second;
}

constexpr const char* kCorruptHint =
    "the checkpoint's metadata was edited or damaged; resume from an intact checkpoint, or start "
    "again with --init";

// The checkpoint's `step`: a count of completed steps, decimal digits only (at most 18, far
// beyond the 2^40 steps a run may take).
int64_t step_of(const SafetensorsFile& file) {
  const std::string text = metadata_value(file, "step");
  const bool digits = !text.empty() && text.size() <= 18 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (!digits) {
    user_error("E1030").hint(kCorruptHint) << "`" << file.name() << "`: metadata `step` is " << text_excerpt(text)
                                           << ", not a count of steps (digits 0-9, at most 18)";
  }
  return std::stoll(text);
}

// The generator's state must be the one the writer records for (seed, step): resuming from
// another would draw other windows and dropout masks than the run it continues.
void check_generator(const SafetensorsFile& file, int64_t step, const RunIdentity& identity) {
  const std::string origin = "`" + file.name() + "`: metadata `generator`";
  nlohmann::json generator = parse_user_json(metadata_value(file, "generator"), {origin, "E1030", kCorruptHint});
  const bool well_formed = generator.is_object() && generator.size() == 3 && generator.contains("kind") && generator["kind"] == "counter" &&
                           generator.contains("seed") && generator["seed"].is_number_unsigned() &&
                           generator.contains("next_step") && generator["next_step"].is_number_unsigned();
  if (!well_formed) {
    user_error("E1030").hint(kCorruptHint)
        << origin << " is " << json_excerpt(generator) << ", not {\"kind\": \"counter\", \"seed\": S, \"next_step\": N}";
  }
  auto seed = identity.find("seed");
  const std::string expected_seed = seed == identity.end() ? "0" : seed->second;
  const std::string next_step = std::to_string(generator["next_step"].get<uint64_t>());
  const std::string its_seed = std::to_string(generator["seed"].get<uint64_t>());
  if (next_step != std::to_string(step) || its_seed != expected_seed) {
    user_error("E1031").hint(kCorruptHint)
        << "`" << file.name() << "`: the generator's state (seed " << its_seed << ", next step " << next_step
        << ") disagrees with the checkpoint's step " << step << " and seed " << expected_seed;
  }
}

}  // namespace

std::vector<ParameterState> parameter_layout(const ir::Program& program) {
  std::vector<ParameterState> layout;
  for (const ir::Param& param : program.params) {
    if (param.type.kind != ir::ElemKind::Real) continue;
    layout.push_back({param.path, param.type.shape, param.stack_depth, {}, {}, {}, param.type.axes});
  }
  return layout;
}

void write_checkpoint(const std::string& path, const TrainState& state, RealType master,
                      const RunIdentity& identity, const RunNotes& notes) {
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  tensors.reserve(3 * state.parameters.size());
  for (const ParameterState& p : state.parameters) {
    tensors.push_back(tensor_of(p.theta, p.shape, master));
    names.push_back(p.path);
    tensors.push_back(tensor_of(p.m, p.shape, master));
    names.push_back(kMomentPrefix + std::string("m.") + p.path);
    tensors.push_back(tensor_of(p.v, p.shape, master));
    names.push_back(kMomentPrefix + std::string("v.") + p.path);
  }
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < tensors.size(); ++i) named.push_back({names[i], tensors[i]});
  std::map<std::string, std::string> metadata = identity;
  metadata.insert(notes.begin(), notes.end());
  metadata["format"] = std::to_string(kCheckpointFormat);
  metadata["kind"] = kCheckpointKind;
  metadata["step"] = std::to_string(state.step);
  auto seed = identity.find("seed");
  metadata["generator"] =
      generator_text(seed == identity.end() ? 0 : std::stoull(seed->second), state.step);
  write_safetensors(path, named, metadata);
}

void write_weights(const std::string& path, const TrainState& state, RealType master,
                   const RunIdentity& identity, const RunNotes& notes) {
  std::vector<Tensor> tensors;
  tensors.reserve(state.parameters.size());
  std::vector<NamedTensor> named;
  for (const ParameterState& p : state.parameters)
    tensors.push_back(tensor_of(p.theta, p.shape, master));
  for (size_t k = 0; k < tensors.size(); ++k)
    named.push_back({state.parameters[k].path, tensors[k]});
  std::map<std::string, std::string> metadata = {{"format", std::to_string(kCheckpointFormat)},
                                                 {"kind", "presk trained weights"},
                                                 {"step", std::to_string(state.step)}};
  for (const char* key : {"program_hash", "entry"}) {
    auto found = identity.find(key);
    if (found != identity.end()) metadata[key] = found->second;
  }
  metadata.insert(notes.begin(), notes.end());
  write_safetensors(path, named, metadata);
}

TrainState read_checkpoint(const std::string& path, const std::vector<ParameterState>& layout,
                           RealType master, const RunIdentity& identity, const ir::Program* program) {
  SafetensorsFile file = SafetensorsFile::open(path);
  if (metadata_value(file, "kind") != kCheckpointKind ||
      metadata_value(file, "format") != std::to_string(kCheckpointFormat)) {
    user_error("E1004").hint("pass a checkpoint written by `presk train --out` (format " +
                             std::to_string(kCheckpointFormat) + ")")
        << "`" << path << "` is not a presk training checkpoint of format " << kCheckpointFormat;
  }
  const std::string hash = metadata_value(file, "program_hash");
  if (hash != identity.at("program_hash")) {
    user_error("E1005").hint(
        "resume with the program, --const, --dim, --entry and --dropout the checkpoint was trained "
        "with")
        << "`" << path << "` is a checkpoint of another program (hash " << hash.substr(0, 12)
        << "…, this one's " << identity.at("program_hash").substr(0, 12) << "…)";
  }
  std::map<std::string, ir::Type> wanted;
  for (const ParameterState& p : layout) {
    wanted[p.path] = type_of(p);
    wanted[std::string(kMomentPrefix) + "m." + p.path] = type_of(p);
    wanted[std::string(kMomentPrefix) + "v." + p.path] = type_of(p);
  }
  check_layout(file, wanted, safetensors_dtype(exec::native::element_type_of(master)), false, program);
  std::ostringstream differences;
  for (const auto& [key, value] : identity) {
    const std::string theirs = metadata_value(file, key);
    if (theirs != value)
      differences << "\n  " << key << ": the checkpoint's " << theirs << ", this run's " << value;
  }
  if (!differences.str().empty()) {
    user_error("E1007").hint(
        "resume with the options the checkpoint was written with (presk tensors shows its "
        "metadata)")
        << "`" << path << "` was written by a run with other settings:" << differences.str();
  }
  TrainState state;
  state.step = step_of(file);
  check_generator(file, state.step, identity);
  for (const ParameterState& p : layout) {
    ParameterState loaded = p;
    loaded.theta = values_of(file.read(p.path), master);
    loaded.m = values_of(file.read(std::string(kMomentPrefix) + "m." + p.path), master);
    loaded.v = values_of(file.read(std::string(kMomentPrefix) + "v." + p.path), master);
    state.parameters.push_back(std::move(loaded));
  }
  return state;
}

TrainState read_initial_parameters(const std::string& path,
                                   const std::vector<ParameterState>& layout, RealType master,
                                   const ir::Program* program) {
  SafetensorsFile file = SafetensorsFile::open(path);
  std::map<std::string, ir::Type> wanted;
  for (const ParameterState& p : layout) wanted[p.path] = type_of(p);
  check_layout(file, wanted, "", true, program);
  TrainState state;
  for (const ParameterState& p : layout) {
    ParameterState loaded = p;
    loaded.theta = values_of(file.read(p.path), master);
    loaded.m.assign(loaded.theta.size(), 0.0);
    loaded.v.assign(loaded.theta.size(), 0.0);
    state.parameters.push_back(std::move(loaded));
  }
  return state;
}

}  // namespace presk::train
