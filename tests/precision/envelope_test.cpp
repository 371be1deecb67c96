// The envelope file: a round trip keeps every field (unknown sensitivities, absent terms and
// infinite rounding errors included), and each way a file can be wrong has its own code, with
// a message that names the file and the field.
#include "precision/envelope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "support/diagnostics.h"
#include "support/temp_folder.h"

namespace presk::precision {
namespace {

using testing_support::TempFolder;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

Envelope sample_envelope() {
  Envelope envelope;
  envelope.program = "examples/gpt_tiny.psk";
  envelope.program_hash = std::string(64, 'a');
  envelope.entry = "loss";
  envelope.bindings = {{"T", "4"}, {"D", "8"}};
  envelope.seed = 7;
  envelope.token_range = 11;
  envelope.samples = 2;
  envelope.offset = 3;
  envelope.bits = 128;
  envelope.date = "2026-11-30T12:00:00Z";
  envelope.output_max_abs = 2.397895272798371;
  SiteEnvelope contraction{"Linear.apply/%2", "contract", "R[4, 8]", 0.125, 64, 32, 0, 15,
                           TermEnvelope{8, 0.5, 0.25, {0.75, 1.5}}, {1e-17, 3e-9, 2e-3}, 42.5};
  SiteEnvelope mask{"SelfAttention.apply/%13", "causal_mask", "R[2, 4, 4]", 24.03125, 64, 32, 24, 0,
                    std::nullopt, {0, 1e-8, kInfinity}, std::nullopt};
  envelope.sites = {contraction, mask};
  envelope.parameters = {{"blocks.ln1.g", "R[2, 8]", 1, 16, {0, 0, 0}, 3.25},
                         {"head", "R[8, 11]", 0, 88, {0, 0, 0}, std::nullopt}};
  return envelope;
}

void expect_same(const RoundingEnvelope& a, const RoundingEnvelope& b) {
  EXPECT_EQ(a.f64, b.f64);
  EXPECT_EQ(a.f32, b.f32);
  EXPECT_EQ(a.bf16, b.bf16);
}

TEST(Envelope, RoundTripKeepsEveryField) {
  TempFolder folder;
  Envelope written = sample_envelope();
  write_envelope(written, folder.file("envelope.json"));
  Envelope read = read_envelope(folder.file("envelope.json"));
  EXPECT_EQ(read.format, 1);
  EXPECT_EQ(read.program, written.program);
  EXPECT_EQ(read.program_hash, written.program_hash);
  EXPECT_EQ(read.entry, written.entry);
  EXPECT_EQ(read.bindings, written.bindings);
  EXPECT_EQ(read.data, "");
  EXPECT_EQ(read.seed, 7);
  EXPECT_EQ(read.token_range, 11);
  EXPECT_EQ(read.samples, 2);
  EXPECT_EQ(read.offset, 3);
  EXPECT_EQ(read.bits, 128);
  EXPECT_EQ(read.weights, "");
  EXPECT_EQ(read.date, written.date);
  EXPECT_EQ(read.output_max_abs, written.output_max_abs);  // binary64 survives the decimal text
  ASSERT_EQ(read.sites.size(), 2u);
  const SiteEnvelope& site = read.sites[0];
  EXPECT_EQ(site.site, "Linear.apply/%2");
  EXPECT_EQ(site.op, "contract");
  EXPECT_EQ(site.type, "R[4, 8]");
  EXPECT_EQ(site.max_abs, 0.125);
  EXPECT_EQ(site.elements, 64);
  EXPECT_EQ(site.elements_per_sample, 32);
  EXPECT_EQ(site.weight, 15);
  ASSERT_TRUE(site.terms.has_value());
  EXPECT_EQ(site.terms->terms, 8);
  EXPECT_EQ(site.terms->sum_abs_terms, 0.5);
  EXPECT_EQ(site.terms->root_sum_squares, 0.25);
  EXPECT_EQ(site.terms->operand_factors[0], 0.75);
  EXPECT_EQ(site.terms->operand_factors[1], 1.5);
  expect_same(site.rounding, written.sites[0].rounding);
  EXPECT_EQ(site.sensitivity, 42.5);
  const SiteEnvelope& mask = read.sites[1];
  EXPECT_EQ(mask.non_finite, 24);
  EXPECT_FALSE(mask.terms.has_value());
  EXPECT_TRUE(std::isinf(mask.rounding.bf16));
  EXPECT_FALSE(mask.sensitivity.has_value());  // unknown stays unknown, never 0
  ASSERT_EQ(read.parameters.size(), 2u);
  EXPECT_EQ(read.parameters[0].path, "blocks.ln1.g");
  EXPECT_EQ(read.parameters[0].type, "R[2, 8]");
  EXPECT_EQ(read.parameters[0].elements, 16);
  EXPECT_EQ(read.parameters[0].sensitivity, 3.25);
  EXPECT_FALSE(read.parameters[1].sensitivity.has_value());
  EXPECT_EQ(read.find_site("SelfAttention.apply/%13"), &read.sites[1]);
  EXPECT_EQ(read.find_parameter("head"), &read.parameters[1]);
  EXPECT_EQ(read.find_site("nowhere/%0"), nullptr);
  // The same JSON again: writing what was read changes nothing.
  EXPECT_EQ(envelope_json(read), envelope_json(written));
}

TEST(Envelope, SeedKeepsAll64Bits) {
  TempFolder folder;
  Envelope envelope = sample_envelope();
  envelope.seed = static_cast<int64_t>(UINT64_MAX);  // --seed 18446744073709551615
  write_envelope(envelope, folder.file("e.json"));
  EXPECT_EQ(read_envelope(folder.file("e.json")).seed, envelope.seed);
  std::ifstream in(folder.file("e.json"));
  EXPECT_EQ(nlohmann::json::parse(in)["seed"].get<uint64_t>(), UINT64_MAX);
}

TEST(Envelope, FileIsVersionedJsonWithUnknownAsNull) {
  TempFolder folder;
  write_envelope(sample_envelope(), folder.file("e.json"));
  std::ifstream in(folder.file("e.json"));
  nlohmann::json json = nlohmann::json::parse(in);
  EXPECT_EQ(json["format"], 1);
  EXPECT_TRUE(json["sites"][1]["sensitivity"].is_null());
  EXPECT_TRUE(json["sites"][1]["terms"].is_null());
  EXPECT_EQ(json["sites"][1]["rounding"]["bf16"], "inf");
  EXPECT_FALSE(std::filesystem::exists(folder.file("e.json.presk-tmp")));
}

// The code and message of the error reading `text` as an envelope raises.
std::pair<std::string, std::string> error_of(const std::string& text) {
  TempFolder folder;
  std::string path = folder.file("bad.json");
  std::ofstream(path) << text;
  try {
    read_envelope(path);
  } catch (const UserError& error) {
    return {error.code(), error.what()};
  }
  return {"none", ""};
}

// The sample envelope's JSON with one change.
std::string changed(const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json json = nlohmann::json::parse(envelope_json(sample_envelope()).dump());
  change(json);
  return json.dump();
}

void expect_error(const std::string& text, const std::string& code, const std::string& field) {
  auto [raised, message] = error_of(text);
  EXPECT_EQ(raised, code) << message;
  EXPECT_NE(message.find("bad.json"), std::string::npos) << message;
  EXPECT_NE(message.find(field), std::string::npos) << message;
}

TEST(Envelope, UnreadableFile) {
  TempFolder folder;
  for (const std::string& path : {folder.file("missing.json"), folder.path()}) {
    try {
      read_envelope(path);
      ADD_FAILURE() << path;
    } catch (const UserError& error) {
      EXPECT_EQ(error.code(), "E0900");
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos);
    }
  }
}

TEST(Envelope, MalformedJsonAndNotAnObject) {
  expect_error("{\"format\": 1, ", "E0901", "not valid JSON");
  expect_error("", "E0901", "not valid JSON");
  expect_error("[1, 2]", "E0902", "JSON object");
}

TEST(Envelope, UnknownFormat) {
  expect_error(changed([](nlohmann::json& j) { j["format"] = 2; }), "E0903", "`format`");
  expect_error(changed([](nlohmann::json& j) { j["format"] = "1"; }), "E0903", "`format`");
  expect_error(changed([](nlohmann::json& j) { j.erase("format"); }), "E0904", "`format`");
}

TEST(Envelope, MissingFieldIsNamed) {
  expect_error(changed([](nlohmann::json& j) { j.erase("entry"); }), "E0904", "`entry`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][1]["rounding"].erase("f32"); }), "E0904",
               "`sites[1].rounding.f32`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["terms"].erase("terms"); }), "E0904",
               "`sites[0].terms.terms`");
  expect_error(changed([](nlohmann::json& j) { j["parameters"][1].erase("sensitivity"); }), "E0904",
               "`parameters[1].sensitivity`");
}

TEST(Envelope, MistypedFieldIsNamed) {
  expect_error(changed([](nlohmann::json& j) { j["bits"] = "128"; }), "E0905", "`bits`");
  expect_error(changed([](nlohmann::json& j) { j["sites"] = nlohmann::json::object(); }), "E0905", "`sites`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["max_abs"] = "big"; }), "E0905", "`sites[0].max_abs`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["elements"] = 1.5; }), "E0905", "`sites[0].elements`");
  expect_error(changed([](nlohmann::json& j) { j["bindings"]["T"] = 4; }), "E0905", "`bindings.T`");
  expect_error(changed([](nlohmann::json& j) { j["parameters"][0] = 3; }), "E0905", "`parameters[0]`");
}

TEST(Envelope, ValueOutOfRange) {
  expect_error(changed([](nlohmann::json& j) { j["bits"] = 10; }), "E0906", "`bits`");
  expect_error(changed([](nlohmann::json& j) { j["samples"] = 0; }), "E0906", "`samples`");
  expect_error(changed([](nlohmann::json& j) { j["seed"] = -1; }), "E0906", "`seed`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["elements"] = -1; }), "E0906", "`sites[0].elements`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["rounding"]["f64"] = -1e-17; }), "E0906",
               "`sites[0].rounding.f64`");
  expect_error(changed([](nlohmann::json& j) { j["sites"][0]["terms"]["operand_factors"] = {1}; }), "E0906",
               "`sites[0].terms.operand_factors`");
}

TEST(Envelope, DuplicateSiteOrParameter) {
  expect_error(changed([](nlohmann::json& j) { j["sites"][1]["site"] = j["sites"][0]["site"]; }), "E0907",
               "Linear.apply/%2");
  expect_error(changed([](nlohmann::json& j) { j["parameters"][1]["path"] = "blocks.ln1.g"; }), "E0907",
               "`parameters[1].path`");
}

}  // namespace
}  // namespace presk::precision
