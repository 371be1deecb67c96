// The weights loader of weights.h.
#include "exec/reference/weights.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "exec/reference/checkpoint.h"
#include "ir/extent_fit.h"
#include "support/diagnostics.h"
#include "support/hf_checkpoint.h"
#include "support/safetensors.h"

namespace presk::reference {
namespace {

// Reports what is wrong with the tensor of `param` in the file; true when it is usable.
bool check_tensor(const ir::Program& program, const ir::Param& param, const SafetensorsEntry& entry,
                  const std::string& file, DiagnosticSink& sink) {
  bool usable = true;
  if (entry.shape != param.type.shape) {
    const std::string fit = ir::extent_fit_note(param.type, entry.shape, &program);
    sink.report("E0512", {}, "tensor `" + param.path + "` in " + file + " has shape " +
                ir::shape_text(entry.shape) + ", the program's parameter is " +
                ir::type_to_string(param.type) + (fit.empty() ? "" : ": " + fit),
                "export the weights of this program (a transposed or resized tensor is refused)");
    usable = false;
  }
  if (!facts(entry.type).is_float) {
    sink.report("E0513", {}, "tensor `" + param.path + "` in " + file + " has dtype " +
                entry.file_dtype + "; a parameter of R must be F64, F32 or BF16",
                "store real parameters in a float dtype");
    usable = false;
  }
  return usable;
}

}  // namespace

ParameterStore load_weights(const ir::Program& program, const std::string& path) {
  if (is_checkpoint_folder(path)) return load_checkpoint_weights(program, path);
  const auto shared = std::make_shared<const SafetensorsFile>(SafetensorsFile::open(path));
  const SafetensorsFile& file = *shared;
  DiagnosticSink sink;
  ParameterStore store;
  std::set<std::string> expected;
  for (const ir::Param& param : program.params) {
    expected.insert(param.path);
    const SafetensorsEntry* entry = file.find(param.path);
    if (entry == nullptr) {
      sink.report("E0510", {}, "parameter `" + param.path + "` (" + ir::type_to_string(param.type) +
                  ") has no tensor in " + path,
                  "write every parameter of the program, named by its path");
      continue;
    }
    if (!check_tensor(program, param, *entry, path, sink)) continue;
    store.set_view(param.path, ParamView(entry->type, {{&file, entry}}, shared));  // in place, in its type
  }
  for (const SafetensorsEntry& entry : file.entries()) {
    if (expected.count(entry.name) == 0) {
      sink.report("E0511", {}, "tensor `" + entry.name + "` in " + path +
                  " is not a parameter of the program",
                  "remove it, or check that the file belongs to this program and these --const values");
    }
  }
  sink.throw_if_errors();
  return store;
}

namespace {

// A token-window tensor [S, …, W + 1] (presk data prepare) for a Z[…, W] argument: each sample
// is read as its window's first W tokens, so a logits entry reads the windows a loss entry reads.
bool is_token_window(const ir::Type& type, const std::vector<int64_t>& tensor_shape) {
  if (type.kind != ir::ElemKind::Int || type.shape.empty() || tensor_shape.size() != type.shape.size() + 1) {
    return false;
  }
  std::vector<int64_t> window(tensor_shape.begin() + 1, tensor_shape.end());
  --window.back();
  return window == type.shape;
}

// Checks the tensor of data argument k (E0516, E0515); returns the samples it holds.
int64_t check_input(const ir::Function& entry, size_t k, const SafetensorsEntry& tensor,
                    const std::string& path) {
  const ir::Type& type = entry.argument_types[k];
  const std::string& name = entry.argument_names[k];
  bool is_float = facts(tensor.type).is_float;
  if (is_float != (type.kind == ir::ElemKind::Real)) {
    user_error("E0516").hint("R arguments are stored as F64/F32/BF16, Z and B as integers")
        << "tensor `" << name << "` in " << path << " has dtype " << tensor.file_dtype
        << ", argument `" << name << "` is " << ir::type_to_string(type);
  }
  std::vector<int64_t> sample_shape = tensor.shape;
  int64_t samples = 1;
  if (sample_shape.size() == type.shape.size() + 1) {
    samples = sample_shape.front();
    sample_shape.erase(sample_shape.begin());
  }
  if (sample_shape != type.shape && !is_token_window(type, tensor.shape)) {
    user_error("E0515").hint("store the argument with its shape, or [samples, ...shape] and pick samples with --offset/--samples")
        << "tensor `" << name << "` in " << path << " has shape " << ir::shape_text(tensor.shape)
        << "; argument `" << name << "` is " << ir::type_to_string(type);
  }
  return samples;
}

}  // namespace

struct DataFile::State {
  const ir::Function& entry;
  std::string path;
  SafetensorsFile file;
  std::vector<const SafetensorsEntry*> tensors;  // per argument
  std::vector<int64_t> samples;                  // per argument
};

DataFile::DataFile(const ir::Function& entry, const std::string& path)
    : state_(new State{entry, path, SafetensorsFile::open(path), {}, {}}) {
  for (size_t k = 0; k < entry.argument_types.size(); ++k) {
    const SafetensorsEntry* tensor = state_->file.find(entry.argument_names[k]);
    if (tensor == nullptr) {
      user_error("E0514").hint("name each tensor of the data file after its argument")
          << path << " has no tensor `" << entry.argument_names[k] << "` for argument "
          << k << " of `" << entry.name << "`";
    }
    state_->samples.push_back(check_input(entry, k, *tensor, path));
    state_->tensors.push_back(tensor);
  }
}

DataFile::~DataFile() = default;
DataFile::DataFile(DataFile&&) noexcept = default;
DataFile& DataFile::operator=(DataFile&&) noexcept = default;

int64_t DataFile::samples() const {
  int64_t fewest = std::numeric_limits<int64_t>::max();
  for (int64_t n : state_->samples) fewest = std::min(fewest, n);
  return fewest;  // no data arguments: any sample
}

void DataFile::require(int64_t offset, int64_t count) const {
  for (size_t k = 0; k < state_->tensors.size(); ++k) {
    // offset + count may overflow int64 (an --offset near 2⁶³): compare without adding.
    const int64_t held = state_->samples[k];
    if (offset >= 0 && count >= 0 && count <= held && offset <= held - count) continue;
    const std::string& name = state_->entry.argument_names[k];
    user_error("E0515").hint("the file holds samples [0, " + std::to_string(held) +
                             "); lower --offset or --samples")
        << "tensor `" << name << "` in " << state_->path << " has shape "
        << ir::shape_text(state_->tensors[k]->shape) << "; " << count << " sample"
        << (count == 1 ? "" : "s") << " from sample " << offset << " were requested";
  }
}

std::vector<HostTensor> DataFile::sample(int64_t index) const {
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < state_->tensors.size(); ++k) {
    HostTensor host;
    host.type = state_->entry.argument_types[k];
    const auto count = static_cast<uint64_t>(host.type.element_count());
    // A row of the file's last axis: the argument's, or one longer for a token window.
    const auto row = static_cast<uint64_t>(host.type.shape.empty() ? 1 : host.type.shape.back());
    const auto stored_row = static_cast<uint64_t>(host.type.shape.empty() ? 1 : state_->tensors[k]->shape.back());
    const uint64_t first = row == 0 ? 0 : static_cast<uint64_t>(index) * (count / row) * stored_row;
    const SafetensorsEntry& tensor = *state_->tensors[k];
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t index = first + i / row * stored_row + i % row;
      // Integers read exactly: through a double, I64 beyond 2^53 would round (2^63 − 1 to −2^63).
      if (host.type.kind == ir::ElemKind::Real) host.reals.push_back(state_->file.value(tensor, index));
      else host.integers.push_back(state_->file.integer(tensor, index));
    }
    inputs.push_back(std::move(host));
  }
  return inputs;
}

std::vector<HostTensor> load_inputs(const ir::Function& entry, const std::string& path,
                                    int64_t offset) {
  DataFile file(entry, path);
  file.require(offset, 1);
  return file.sample(offset);
}

}  // namespace presk::reference
