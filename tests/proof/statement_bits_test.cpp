// The Gappa statement computes what the native kernels compute: the script's rounded scalars
// (`r<n> = rnd32(…)`), evaluated on the inputs with each rounding done by MPFR, give the native
// executor's output bit for bit — under f32, f64, bf16 and an interleaved order, for a layer norm
// and a contraction. So the script states the kernels' operations in their order, not a formula.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/run_command.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::proof {
namespace {

using Number = std::shared_ptr<__mpfr_struct>;

Number make() {
  auto* x = new __mpfr_struct;
  mpfr_init2(x, 600);
  return Number(x, [](__mpfr_struct* p) {
    mpfr_clear(p);
    delete p;
  });
}

// Gappa's rounded expressions over MPFR at 600 bits (exact for what a row of these programs
// adds and multiplies; a quotient or root is rounded twice only in a case that cannot arise from
// 53-bit operands), each rnd64/rnd32/rndbf rounding to 53/24/8 bits, to nearest even.
class Evaluator {
 public:
  std::map<std::string, Number> names;

  Number evaluate(const std::string& text) {
    text_ = text;
    at_ = 0;
    Number v = sum();
    EXPECT_EQ(at_, text_.size()) << text;
    return v;
  }

 private:
  void skip() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool eat(char c) {
    skip();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  Number sum() {
    Number v = product();
    for (;;) {
      if (eat('+')) {
        Number w = product(), r = make();
        mpfr_add(r.get(), v.get(), w.get(), MPFR_RNDN);
        v = r;
      } else if (eat('-')) {
        Number w = product(), r = make();
        mpfr_sub(r.get(), v.get(), w.get(), MPFR_RNDN);
        v = r;
      } else
        return v;
    }
  }
  Number product() {
    Number v = factor();
    for (;;) {
      if (eat('*')) {
        Number w = factor(), r = make();
        mpfr_mul(r.get(), v.get(), w.get(), MPFR_RNDN);
        v = r;
      } else if (eat('/')) {
        Number w = factor(), r = make();
        mpfr_div(r.get(), v.get(), w.get(), MPFR_RNDN);
        v = r;
      } else
        return v;
    }
  }
  Number factor() {
    skip();
    if (eat('-')) {
      Number v = factor(), r = make();
      mpfr_neg(r.get(), v.get(), MPFR_RNDN);
      return r;
    }
    if (eat('(')) {
      Number v = sum();
      EXPECT_TRUE(eat(')'));
      return v;
    }
    if (eat('|')) {
      Number v = sum(), r = make();
      EXPECT_TRUE(eat('|'));
      mpfr_abs(r.get(), v.get(), MPFR_RNDN);
      return r;
    }
    size_t start = at_;
    while (
        at_ < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.' ||
         ((text_[at_] == '-') && at_ > start && (text_[at_ - 1] == 'b' || text_[at_ - 1] == 'e'))))
      ++at_;
    const std::string word = text_.substr(start, at_ - start);
    if (eat('(')) {
      Number v = sum(), r = make();
      EXPECT_TRUE(eat(')'));
      if (word == "sqrt") {
        mpfr_sqrt(r.get(), v.get(), MPFR_RNDN);
        return r;
      }
      const int bits = word == "rnd64" ? 53 : word == "rnd32" ? 24 : 8;
      EXPECT_TRUE(word == "rnd64" || word == "rnd32" || word == "rndbf") << word;
      mpfr_set(r.get(), v.get(), MPFR_RNDN);
      mpfr_prec_round(r.get(), bits, MPFR_RNDN);
      Number wide = make();
      mpfr_set(wide.get(), r.get(), MPFR_RNDN);
      return wide;
    }
    if (std::isdigit(static_cast<unsigned char>(word[0]))) {
      Number r = make();
      const size_t b = word.find('b');
      mpfr_set_str(r.get(), word.substr(0, b).c_str(), 10, MPFR_RNDN);
      if (b != std::string::npos)
        mpfr_mul_2si(r.get(), r.get(), std::stol(word.substr(b + 1)), MPFR_RNDN);
      return r;
    }
    auto found = names.find(word);
    EXPECT_NE(found, names.end()) << "unknown name " << word;
    return found == names.end() ? make() : found->second;
  }

  std::string text_;
  size_t at_ = 0;
};

// The script's rounded values of the goals, on free variables E<k> = inputs[k].
std::vector<double> evaluate_goals(const std::string& script, const std::vector<double>& inputs) {
  Evaluator evaluator;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Number x = make();
    mpfr_set_d(x.get(), inputs[k], MPFR_RNDN);
    evaluator.names["E" + std::to_string(k)] = x;
  }
  std::stringstream lines(script);
  std::vector<double> goals;
  bool in_goals = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '@') continue;
    if (line[0] == 'r' && !in_goals) {
      const size_t eq = line.find(" = ");
      evaluator.names[line.substr(0, eq)] =
          evaluator.evaluate(line.substr(eq + 3, line.size() - eq - 4));
    }
    if (line.find("->") != std::string::npos) in_goals = true;
    if (in_goals && line.find(" in ?") != std::string::npos) {
      const size_t bar = line.find('|');
      const std::string name = line.substr(bar + 1, line.find(' ', bar) - bar - 1);
      goals.push_back(mpfr_get_d(evaluator.names.at(name).get(), MPFR_RNDN));
    }
  }
  return goals;
}

struct Case {
  std::string program, entry, realize, bindings;
  std::vector<int64_t> shape;  // of the argument x
};

TEST(StatementBits, ScriptComputesTheNativeBits) {
  testing_support::TempFolder folder;
  const std::string dot = folder.file("dot.psk");
  std::ofstream(dot) << "const K = 8\nmodule Dot {\n  param w : R[K, 2] = normal(1.0)\n"
                        "  fn apply(x : R[K]) -> R[2] = x · w\n}\nentry dot(p : Dot, x : R[K]) -> "
                        "R[2] = p.apply(x)\n";
  const std::string interleaved = folder.file("interleaved.json");
  std::ofstream(interleaved)
      << R"({"format": 1, "default": "f32", "order": {"kind": "interleaved", "partials": 3}})";
  const std::string ln = std::string(PRESK_SOURCE_DIR) + "/examples/layernorm.psk";
  const std::string rms = std::string(PRESK_SOURCE_DIR) + "/examples/rmsnorm.psk";
  const std::vector<Case> cases = {
      {ln, "normalize", "f32", "--const D=6 --dim T=1", {1, 6}},
      {ln, "normalize", "f64", "--const D=6 --dim T=1", {1, 6}},
      {ln, "normalize", "bf16", "--const D=6 --dim T=1", {1, 6}},
      {ln, "normalize", "@" + interleaved, "--const D=7 --dim T=1", {1, 7}},
      {rms, "normalize", "bf16", "--const D=5 --dim T=1", {1, 5}},
      {dot, "dot", "f32", "", {8}},
      {dot, "dot", "@" + interleaved, "", {8}},
  };
  for (const Case& c : cases) {
    int64_t count = 1;
    for (int64_t e : c.shape) count *= e;
    Tensor x(ElementType::f64, c.shape);
    std::vector<double> inputs;
    for (int64_t i = 0; i < count; ++i)
      inputs.push_back(0.37 * static_cast<double>((i * 7) % 11) - 1.3 +
                       1e-3 * static_cast<double>(i));
    for (int64_t i = 0; i < count; ++i) x.set(i, inputs[i]);
    const std::string data = folder.file("x.safetensors");
    write_safetensors(data, {{"x", x}});
    const std::string envelope = folder.file("env.json"), script = folder.file("s.g");
    auto result = testing::run_command(
        testing::presk() + " calibrate --precision " + c.program + " --entry " + c.entry + " " +
            c.bindings + " --data " + data + " --samples 1 --bits 128 --quiet --out " + envelope,
        false);
    ASSERT_EQ(result.status, 0) << result.output;
    result = testing::run_command(testing::presk() + " gappa " + c.program + " --realize " +
                                      c.realize + " --precision " + envelope + " --out " + script,
                                  false);
    ASSERT_EQ(result.status, 0) << result.output;
    result = testing::run_command(testing::presk() + " run " + c.program + " --entry " + c.entry +
                                      " " + c.bindings + " --realize " + c.realize + " --data " +
                                      data + " --json",
                                  false);
    ASSERT_EQ(result.status, 0) << result.output;
    const nlohmann::json values =
        nlohmann::json::parse(result.output)["samples"][0]["outputs"][0]["values"];
    std::ifstream in(script);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::vector<double> goals = evaluate_goals(text, inputs);
    const size_t row = static_cast<size_t>(c.shape.back() == 8 ? 2 : c.shape.back());
    ASSERT_EQ(goals.size(), row) << c.program << " " << c.realize;
    for (size_t i = 0; i < row; ++i) {
      EXPECT_EQ(goals[i], std::stod(values[i].get<std::string>()))
          << c.program << " " << c.realize << " element " << i;
    }
  }
}

}  // namespace
}  // namespace presk::proof
