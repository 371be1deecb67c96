// Times the exact reference interpreter on the loss of examples/gpt.psk (one synthesized
// window) at 128 and 256 bits, MPFR and ball, and prints each beside the arithmetic floor:
// the number of MPFR operations the program performs (counted from the IR) times their cost
// measured in this run on normal(0, 1) operands (thread CPU time), divided by the thread count.
// Beside wall-clock seconds it prints CPU seconds (all threads of the run against one thread's
// floor), which other processes on a shared machine disturb far less.
//   reference_floor [PROGRAM] [T] [THREADS]     (defaults: examples/gpt.psk 256 2)
#include <mpfr.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "exec/reference/interpreter.h"
#include "lang/frontend.h"
#include "support/random.h"

using namespace presk;

namespace {

enum class Cost { Fma, Add, Mul, Div, Exp, Log, Sqrt, Tanh, Erf };
constexpr const char* kCostNames[] = {"fma", "add", "mul", "div", "exp", "log", "sqrt", "tanh", "erf"};

using Counts = std::map<Cost, double>;

// Terms per output element of a contraction: the extents of x's letters absent from the output.
double contracted_extent(const ir::Function& f, const ir::Let& let) {
  const std::string& spec = let.attrs.spec;
  std::string x = spec.substr(0, spec.find(',')), out = spec.substr(spec.find("->") + 2);
  const std::vector<int64_t>& shape = f.type_of(let.operands[0]).shape;
  double extent = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (out.find(x[i]) == std::string::npos) extent *= static_cast<double>(shape[i]);
  }
  return extent;
}

// Adds the MPFR operations of one let (elements × operations per element).
void count_let(const ir::Function& f, const ir::Let& let, double times, Counts& counts) {
  double n = static_cast<double>(let.type.element_count()) * times;
  auto in = [&](int k) { return static_cast<double>(f.type_of(let.operands[k]).element_count()) * times; };
  switch (let.op) {
    case ir::Op::contract: counts[Cost::Fma] += n * contracted_extent(f, let); break;
    case ir::Op::add: case ir::Op::sub: counts[Cost::Add] += n; break;
    case ir::Op::mul: counts[Cost::Mul] += n; break;
    case ir::Op::div: counts[Cost::Div] += n; break;
    case ir::Op::exp: counts[Cost::Exp] += n; break;
    case ir::Op::log: counts[Cost::Log] += n; break;
    case ir::Op::sqrt: case ir::Op::rsqrt: counts[Cost::Sqrt] += n; break;
    case ir::Op::tanh: counts[Cost::Tanh] += n; break;
    case ir::Op::gelu_tanh: counts[Cost::Tanh] += n; counts[Cost::Mul] += 5 * n; counts[Cost::Add] += 2 * n; break;
    case ir::Op::gelu_erf: counts[Cost::Erf] += n; counts[Cost::Div] += n; counts[Cost::Mul] += n; counts[Cost::Add] += n; break;
    case ir::Op::sum: case ir::Op::mean: counts[Cost::Add] += in(0); break;
    case ir::Op::softmax: counts[Cost::Exp] += n; counts[Cost::Add] += 2 * n; counts[Cost::Div] += n; break;
    case ir::Op::log_softmax: counts[Cost::Exp] += n; counts[Cost::Add] += 4 * n; break;
    case ir::Op::cross_entropy: counts[Cost::Exp] += in(0); counts[Cost::Add] += 2 * in(0); break;
    default: break;
  }
}

void count_function(const ir::Program& program, const ir::Function& f, double times, Counts& counts) {
  for (const ir::Let& let : f.lets) {
    if (let.op == ir::Op::call || let.op == ir::Op::fold) {
      double layers = 1;
      if (let.op == ir::Op::fold) {
        for (const ir::Param& p : program.params) {
          if (p.path.rfind(let.attrs.path + ".", 0) == 0) { layers = static_cast<double>(p.type.shape[0]); break; }
        }
      }
      count_function(program, *program.find_function(let.attrs.callee), times * layers, counts);
    } else {
      count_let(f, let, times, counts);
    }
  }
}

// Nanoseconds per operation of `kind` at `bits`, over normal(0, 1) operands.
double measure(Cost kind, long bits) {
  constexpr int kCount = 4096;
  std::vector<mpfr_t> x(kCount);
  for (int i = 0; i < kCount; ++i) {
    mpfr_init2(x[i], bits);
    mpfr_set_d(x[i], random::normal(1, 2, i, 1.0), MPFR_RNDN);
  }
  mpfr_t r;
  mpfr_init2(r, bits);
  mpfr_set_zero(r, 1);
  int repeats = kind >= Cost::Exp ? 2 : 200;
  timespec begin{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &begin);
  for (int k = 0; k < repeats; ++k) {
    for (int i = 0; i + 1 < kCount; ++i) {
      switch (kind) {
        case Cost::Fma: mpfr_fma(r, x[i], x[i + 1], r, MPFR_RNDN); break;
        case Cost::Add: mpfr_add(r, r, x[i], MPFR_RNDN); break;
        case Cost::Mul: mpfr_mul(r, x[i], x[i + 1], MPFR_RNDN); break;
        case Cost::Div: mpfr_div(r, x[i], x[i + 1], MPFR_RNDN); break;
        case Cost::Exp: mpfr_exp(r, x[i], MPFR_RNDN); break;
        case Cost::Log: mpfr_abs(r, x[i], MPFR_RNDN); mpfr_log(r, r, MPFR_RNDN); break;
        case Cost::Sqrt: mpfr_abs(r, x[i], MPFR_RNDN); mpfr_sqrt(r, r, MPFR_RNDN); break;
        case Cost::Tanh: mpfr_tanh(r, x[i], MPFR_RNDN); break;
        case Cost::Erf: mpfr_erf(r, x[i], MPFR_RNDN); break;
      }
    }
  }
  timespec end{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
  double ns = 1e9 * static_cast<double>(end.tv_sec - begin.tv_sec) + static_cast<double>(end.tv_nsec - begin.tv_nsec);
  for (auto& v : x) mpfr_clear(v);
  mpfr_clear(r);
  return ns / (static_cast<double>(repeats) * (kCount - 1));
}

// CPU seconds this process has used (all threads): robust to other processes on the machine.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class A>
double time_run(const ir::Program& program, const reference::ParameterStore& params,
                const std::vector<reference::HostTensor>& inputs, long bits, int threads,
                std::string& value, double& cpu) {
  A arith(bits);
  std::vector<reference::Value<A>> arguments;
  for (const auto& input : inputs) arguments.push_back(reference::to_value(arith, input));
  reference::RunOptions options;
  options.bits = bits;
  options.threads = threads;
  double cpu_start = process_cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  auto out = reference::run_function<A>(program, reference::find_entry(program, "loss"), params, arguments, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cpu = process_cpu_seconds() - cpu_start;
  value = arith.to_decimal(out[0].real(0), 12);
  if constexpr (A::kIsBall) value += " ± " + arith.radius_decimal(out[0].real(0));
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : std::string(PRESK_SOURCE_DIR) + "/examples/gpt.psk";
  int64_t t = argc > 2 ? std::stoll(argv[2]) : 256;
  int threads = argc > 3 ? std::stoi(argv[3]) : 2;
  lang::FrontendOptions frontend;
  frontend.dims = {{"T", t}};
  frontend.entry = "loss";
  ir::Program program = lang::compile(lang::read_source(path), frontend);
  Counts counts;
  count_function(program, reference::find_entry(program, "loss"), 1, counts);
  auto params = reference::synthesize_parameters(program, 0, threads);
  auto inputs = reference::synthesize_inputs(reference::find_entry(program, "loss"), 0,
                                             reference::default_token_range(program));
  std::printf("%s loss, T=%lld, %d threads; operation counts:", path.c_str(), static_cast<long long>(t), threads);
  for (auto& [kind, n] : counts) std::printf(" %s %.3g", kCostNames[static_cast<int>(kind)], n);
  std::printf("\n%-6s %-5s %9s %9s %7s %9s %9s %7s  %s\n", "bits", "arith", "floor s", "run s",
              "ratio", "floor cpu", "run cpu", "ratio", "loss");
  for (long bits : {128L, 256L}) {
    double floor_cpu = 0;  // one thread's CPU seconds for every operation
    for (auto& [kind, n] : counts) floor_cpu += n * measure(kind, bits) * 1e-9;
    double floor = floor_cpu / threads;
    for (const char* arith : {"mpfr", "ball"}) {
      std::string value;
      double cpu = 0;
      double run = arith[0] == 'm'
          ? time_run<reference::MpfrArith>(program, params, inputs, bits, threads, value, cpu)
          : time_run<reference::BallArith>(program, params, inputs, bits, threads, value, cpu);
      std::printf("%-6ld %-5s %9.3f %9.3f %7.2f %9.3f %9.3f %7.2f  %s\n", bits, arith, floor, run,
                  run / floor, floor_cpu, cpu, cpu / floor_cpu, value.c_str());
    }
  }
  return 0;
}
