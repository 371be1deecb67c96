// load_weights for a Hugging Face checkpoint folder (weights.h, docs/checkpoints.md): the
// config's sizes against the program's consts, each parameter from its tensor (a stacked
// one from its L per-layer tensors), the rotary tables computed from the config, and a tied
// head read from the token table.
#include <algorithm>
#include <cmath>
#include <set>

#include "exec/reference/checkpoint.h"
#include "ir/extent_fit.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
#include "support/json_reader.h"

namespace presk::reference {
namespace {

const int64_t* program_const(const ir::Program& program, std::string_view name) {
  for (const auto& [constant, value] : program.consts) {
    if (constant == name) return &value;
  }
  return nullptr;
}

void refuse_field(const std::string& folder, const std::string& field, const std::string& value,
                  const std::string& constant, int64_t expected) {
  user_error("E0150").hint("run the program with --const " + constant + "=" + value + ", or use the checkpoint of this program")
      << folder << "/config.json: " << field << " is " << value << ", the program's " << constant << " is " << expected;
}

// E0150 for the first config field that differs from the program's const.
void check_config(const ir::Program& program, const CheckpointFolder& checkpoint) {
  const nlohmann::json& config = checkpoint.config();
  for (const CheckpointConfigField& row : kCheckpointConfigFields) {
    const int64_t* expected = program_const(program, row.constant);
    auto it = config.find(row.field);
    if (expected == nullptr || it == config.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() != *expected) {
      refuse_field(checkpoint.folder(), row.field, json_excerpt(*it), row.constant, *expected);
    }
  }
  const int64_t* eps_inv = program_const(program, kCheckpointEpsConst);
  auto eps = config.find("rms_norm_eps");
  if (eps_inv != nullptr && eps != config.end() && !eps->is_null()) {
    if (!eps->is_number() || eps->get<double>() <= 0 || std::llround(1 / eps->get<double>()) != *eps_inv) {
      user_error("E0150").hint("run the program with --const EPS_INV=1/rms_norm_eps, or use the checkpoint of this program")
          << checkpoint.folder() << "/config.json: rms_norm_eps is " << json_excerpt(*eps)
          << ", the program's ε is 1/" << *eps_inv;
    }
  }
  auto scaling = config.find("rope_scaling");
  if (scaling != config.end() && !scaling->is_null()) {
    user_error("E0156").hint("presk's tables are the default rotary embedding; remove rope_scaling from a copy of config.json to use it")
        << checkpoint.folder() << "/config.json: rope_scaling " << json_excerpt(*scaling) << " is not supported";
  }
}

// rope_theta (default 10000) as binary32.
float rope_theta(const nlohmann::json& config) {
  auto it = config.find("rope_theta");
  return it != config.end() && it->is_number() ? static_cast<float>(it->get<double>()) : 10000.0F;
}

// The rotary table of a `rotary_emb.cos|sin` parameter [L…, T, R] (HD = 2R), as Hugging
// Face's LlamaRotaryEmbedding computes it in binary32: θᵢ = 1 / theta^(2i / HD), the angle
// t · θᵢ, its cosine or sine; every layer the same.
std::vector<double> rotary_table(const ir::Param& param, float theta, bool sine) {
  const auto& shape = param.type.shape;
  const int64_t positions = shape[shape.size() - 2];
  const int64_t pairs = shape.back();
  std::vector<double> table;
  table.reserve(static_cast<size_t>(param.type.element_count()));
  const int64_t copies = param.type.element_count() / (positions * pairs);
  for (int64_t c = 0; c < copies; ++c) {
    for (int64_t t = 0; t < positions; ++t) {
      for (int64_t i = 0; i < pairs; ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(2 * pairs);
        const float inv_freq = 1.0F / static_cast<float>(std::pow(static_cast<double>(theta), static_cast<double>(exponent)));
        const float angle = static_cast<float>(t) * inv_freq;
        const double value = sine ? std::sin(static_cast<double>(angle)) : std::cos(static_cast<double>(angle));
        table.push_back(static_cast<double>(static_cast<float>(value)));
      }
    }
  }
  return table;
}

// Reports what is wrong with one stored tensor against the shape it must have.
bool usable(const ir::Program& program, const ir::Param& param, const std::string& name, const CheckpointTensor& tensor,
            const std::vector<int64_t>& shape, DiagnosticSink& sink) {
  bool ok = true;
  if (tensor.entry->shape != shape) {
    ir::Type layer_type = param.type;
    layer_type.shape = shape;
    const std::string fit = ir::extent_fit_note(layer_type, tensor.entry->shape, &program);
    sink.report("E0512", {}, "tensor `" + name + "` in " + tensor.file->name() + " has shape " +
                ir::shape_text(tensor.entry->shape) + ", parameter `" + param.path + "` needs " +
                ir::shape_text(shape) + (fit.empty() ? "" : ": " + fit),
                "use the checkpoint of this program and these --const values");
    ok = false;
  }
  if (!facts(tensor.entry->type).is_float) {
    sink.report("E0513", {}, "tensor `" + name + "` in " + tensor.file->name() + " has dtype " +
                tensor.entry->file_dtype + "; a parameter of R must be F64, F32 or BF16",
                "store real parameters in a float dtype");
    ok = false;
  }
  return ok;
}

// The tensors that hold `param` (one, or a stacked parameter's L in layer order), or false
// when the checkpoint has none (then `runs` stays empty; an unusable tensor is reported).
bool load_param(const ir::Program& program, const std::vector<std::string>& stacks, const ir::Param& param,
                const CheckpointFolder& checkpoint, std::set<std::string>& used, std::vector<ParamRun>& runs,
                DiagnosticSink& sink) {
  if (param.stack_depth == 0) {
    const CheckpointTensor tensor = checkpoint.find(param.path);
    if (tensor.file == nullptr) return false;
    used.insert(param.path);
    if (!usable(program, param, param.path, tensor, param.type.shape, sink)) return true;
    runs.push_back({tensor.file, tensor.entry});
    return true;
  }
  if (param.stack_depth > 1 || layer_tensor_name(stacks, param.path, 0).empty()) return false;
  const std::vector<int64_t> layer_shape(param.type.shape.begin() + 1, param.type.shape.end());
  if (checkpoint.find(layer_tensor_name(stacks, param.path, 0)).file == nullptr) return false;
  for (int64_t layer = 0; layer < param.type.shape.front(); ++layer) {
    const std::string name = layer_tensor_name(stacks, param.path, layer);
    const CheckpointTensor tensor = checkpoint.find(name);
    if (tensor.file == nullptr) {
      sink.report("E0510", {}, "layer " + std::to_string(layer) + " of parameter `" + param.path + "` (tensor `" +
                  name + "`) is not in " + checkpoint.folder(),
                  "use the checkpoint of this program and these --const values (num_hidden_layers)");
      return true;
    }
    used.insert(name);
    if (!usable(program, param, name, tensor, layer_shape, sink)) return true;
    runs.push_back({tensor.file, tensor.entry});
  }
  return true;
}

// Holds `param` where its tensors are, in their type (all of one float type, as a checkpoint
// stores them), or widened to binary64 when its layers' types differ.
void hold(ParameterStore& store, const ir::Param& param, std::vector<ParamRun> runs,
          const std::shared_ptr<const CheckpointFolder>& checkpoint) {
  uint64_t count = 0;
  bool one_type = true;
  for (const ParamRun& run : runs) {
    count += run.entry->element_count;
    one_type &= run.entry->type == runs.front().entry->type;
  }
  if (runs.empty() || count != static_cast<uint64_t>(param.type.element_count())) return;  // reported
  if (one_type) {
    const ElementType type = runs.front().entry->type;
    store.set_view(param.path, ParamView(type, std::move(runs), checkpoint));
    return;
  }
  std::vector<double> values;
  for (const ParamRun& run : runs) {
    const std::vector<double> layer = ParamView(run.entry->type, {run}, checkpoint).widened();
    values.insert(values.end(), layer.begin(), layer.end());
  }
  store.set(param.path, std::move(values));
}

}  // namespace

namespace {

void collect_stacks(const ir::Program& program, const ir::Function& function, const std::string& context,
                    std::vector<std::string>& stacks, int depth) {
  if (depth > 64) return;  // calls do not recurse (E0327); a bound all the same
  for (const ir::Let& let : function.lets) {
    if (!ir::is_calling(let.op)) continue;
    const std::string path = ir::join_path(context, let.attrs.path);
    if (ir::is_folding(let.op) && std::find(stacks.begin(), stacks.end(), path) == stacks.end()) stacks.push_back(path);
    const ir::Function* callee = program.find_function(let.attrs.callee);
    if (callee != nullptr) collect_stacks(program, *callee, path, stacks, depth + 1);
  }
}

}  // namespace

std::vector<std::string> stack_paths(const ir::Program& program) {
  std::vector<std::string> stacks;
  for (const ir::Function& function : program.functions) {
    if (function.is_entry) collect_stacks(program, function, "", stacks, 0);
  }
  return stacks;
}

std::string layer_tensor_name(const std::vector<std::string>& stacks, const std::string& path, int64_t layer) {
  for (const std::string& stack : stacks) {
    if (path.size() > stack.size() && path.starts_with(stack) && path[stack.size()] == '.') {
      return stack + "." + std::to_string(layer) + path.substr(stack.size());
    }
  }
  return "";
}

bool is_rotary_table(const std::string& path) {
  return path.ends_with("rotary_emb.cos") || path.ends_with("rotary_emb.sin");
}

ParameterStore load_checkpoint_weights(const ir::Program& program, const std::string& folder) {
  const auto shared = std::make_shared<const CheckpointFolder>(CheckpointFolder::open(folder));
  const CheckpointFolder& checkpoint = *shared;
  check_config(program, checkpoint);
  const nlohmann::json& config = checkpoint.config();
  const bool tied = config.value("tie_word_embeddings", false) == true;
  DiagnosticSink sink;
  ParameterStore store;
  std::set<std::string> used;
  const std::vector<std::string> stacks = stack_paths(program);
  for (const ir::Param& param : program.params) {
    std::vector<ParamRun> runs;
    if (load_param(program, stacks, param, checkpoint, used, runs, sink)) {
      hold(store, param, std::move(runs), shared);
    } else if (is_rotary_table(param.path)) {
      store.set(param.path, rotary_table(param, rope_theta(config), param.path.ends_with(".sin")));
    } else if (param.path == "lm_head.weight" && tied && checkpoint.find("model.embed_tokens.weight").file != nullptr) {
      const CheckpointTensor table = checkpoint.find("model.embed_tokens.weight");
      if (usable(program, param, "model.embed_tokens.weight", table, param.type.shape, sink)) {
        hold(store, param, {{table.file, table.entry}}, shared);
      }
    } else {
      sink.report("E0510", {}, "parameter `" + param.path + "` (" + ir::type_to_string(param.type) + ") has no tensor in " +
                  folder, "use the checkpoint of this program: its tensors are named by the parameters' paths");
    }
  }
  for (const std::string& name : checkpoint.tensor_names()) {
    if (used.count(name) == 0 && !name.ends_with("rotary_emb.inv_freq")) {
      sink.report("E0511", {}, "tensor `" + name + "` in " + folder + " is not a parameter of the program",
                  "check that the checkpoint belongs to this program and these --const values");
    }
  }
  sink.throw_if_errors();
  return store;
}

}  // namespace presk::reference
