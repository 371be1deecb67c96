// The examples prepared for the native tests (example_runs.h).
#include "native/example_runs.h"  // tests/native/

#include <algorithm>
#include <cstring>
#include <regex>
#include <sstream>

#include "ad/vjp.h"
#include "lang/frontend.h"
#include "support/diagnostics.h"
#include "support/random.h"

namespace presk::exec::native::test_support {

void PrintTo(const Example& example, std::ostream* out) {
  *out << example.file << ":" << example.entry;
}

std::string test_name(const Example& example) {
  std::string name = std::string(example.file) + "_" + example.entry;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

ir::Program compile_example(const std::string& file, const std::string& entry) {
  auto source = lang::read_source(std::string(PRESK_SOURCE_DIR) + "/examples/" + file);
  lang::FrontendOptions options;
  options.entry = entry;
  std::regex dim_line(R"(^dim\s+([A-Za-z_]\w*))");
  std::istringstream lines(source->text);
  int extent = 5;
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, dim_line)) options.dims.push_back({match[1], extent++});
  }
  return lang::compile(source, options);
}

int64_t token_range(const ir::Program& program) {
  try {
    return reference::default_token_range(program);
  } catch (const UserError&) {
    return 2;
  }
}

std::vector<reference::HostTensor> example_inputs(const ir::Program& program,
                                                  const std::string& entry, uint64_t seed) {
  return reference::synthesize_inputs(*program.find_function(entry), seed, token_range(program));
}

std::vector<Tensor> tensors_of(const std::vector<reference::HostTensor>& hosts) {
  std::vector<Tensor> tensors;
  for (const reference::HostTensor& host : hosts) {
    if (host.type.kind == ir::ElemKind::Real) {
      Tensor t(ElementType::f64, host.type.shape);
      for (size_t i = 0; i < host.reals.size(); ++i) t.set(i, host.reals[i]);
      tensors.push_back(std::move(t));
    } else {
      Tensor t(host.type.kind == ir::ElemKind::Int ? ElementType::i64 : ElementType::boolean,
               host.type.shape);
      for (size_t i = 0; i < host.integers.size(); ++i) t.set_integer(i, host.integers[i]);
      tensors.push_back(std::move(t));
    }
  }
  return tensors;
}

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type() != b[i].type() || a[i].shape() != b[i].shape() ||
        a[i].byte_size() != b[i].byte_size())
      return false;
    if (std::memcmp(a[i].data(), b[i].data(), a[i].byte_size()) != 0) return false;
  }
  return true;
}

VjpRun prepare_vjp(const Example& example, uint64_t seed) {
  return prepare_vjp(compile_example(example.file, example.entry), example.entry, seed);
}

VjpRun prepare_vjp(const ir::Program& forward, const std::string& name, uint64_t seed) {
  VjpRun run{ad::add_vjps(forward), ad::vjp_name(name), example_inputs(forward, name, seed), {}};
  const ir::Function& entry = *forward.find_function(name);
  const ir::Type& result = entry.type_of(entry.results.at(0));
  reference::HostTensor cotangent{
      result, std::vector<double>(static_cast<size_t>(result.element_count()), 1.0), {}};
  if (result.rank() > 0) {
    const uint64_t stream = random::stream_of("test.cotangent");
    for (size_t i = 0; i < cotangent.reals.size(); ++i)
      cotangent.reals[i] = random::normal(seed, stream, i, 1.0);
  }
  run.inputs.push_back(std::move(cotangent));
  const reference::ParameterStore synthesized = reference::synthesize_parameters(forward, seed, 1);
  for (const ir::Param& param : forward.params) {
    std::vector<double> values = *synthesized.find(param.path);
    if (param.type.kind == ir::ElemKind::Real &&
        std::all_of(values.begin(), values.end(), [](double v) { return v == 0; })) {
      const uint64_t stream = random::stream_of(param.path + ".nonzero");
      for (size_t i = 0; i < values.size(); ++i) values[i] = random::normal(seed, stream, i, 0.1);
    }
    run.parameters.set(param.path, std::move(values));
  }
  return run;
}

}  // namespace presk::exec::native::test_support
