// Hostile JSON: realizations (`--realize @file`) and envelopes (`check --precision FILE`)
// nested 100 000 levels deep, holding a megabyte value, a key twice, a comment, a byte-order
// mark, a number beyond binary64, a binding that is no name (it went into a regex), a 23-digit
// site index; a safetensors header whose error would quote a megabyte; and a program path
// that is a folder.
#include "hostile/hostile.h"

namespace presk::hostile {
namespace {

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

class Json : public HostileTest {
 protected:
  // `presk run mse.psk --realize @r.json` with `text` as the realization.
  presk::testing::CommandResult run_realization(const std::string& text) {
    write("r.json", text);
    return presk("run '" + example("mse.psk") + "' --entry mse --dim N=4 --realize @r.json");
  }

  // A valid envelope of mse.psk, as calibrate writes it.
  std::string envelope() {
    auto made = presk("calibrate --precision '" + example("mse.psk") +
                      "' --entry mse --dim N=4 --samples 1 --bits 64 --out made.json");
    EXPECT_EQ(made.status, 0) << made.output;
    return file_bytes(path("made.json"));
  }

  // `presk check --precision e.json mse.psk --realize f32` with `text` as the envelope.
  presk::testing::CommandResult check_envelope(const std::string& text) {
    write("e.json", text);
    return presk("check --precision e.json '" + example("mse.psk") + "' --realize f32");
  }
};

TEST_F(Json, RealizationNestedDeeplyIsRefused) {
  expect_refused(run_realization("{\"format\": 1, \"default\": " + nested(100000) + "}"), 1, "E0010");
}

TEST_F(Json, EnvelopeNestedDeeplyIsRefused) {
  expect_refused(check_envelope("{\"format\": " + nested(100000) + "}"), 1, "E0010");
}

TEST_F(Json, RealizationValueIsCutInTheMessage) {
  expect_refused(run_realization("{\"format\": 1, \"default\": \"" + std::string(1 << 20, 'x') + "\"}"), 1,
                 "E0603", "xxxx\"…");
}

TEST_F(Json, EnvelopeValueIsCutInTheMessage) {
  expect_refused(check_envelope("{\"format\": \"" + std::string(1 << 20, 'x') + "\"}"), 1, "E0903", "xxxx\"…");
}

TEST_F(Json, RealizationKeyTwiceIsRefused) {
  expect_refused(run_realization(R"({"format": 1, "default": "f32", "default": "f64"})"), 1, "E0011",
                 "\"default\"");
  expect_refused(run_realization(R"({"format": 1, "sites": {"mse/%0": "f64", "mse/%0": "bf16"}})"), 1, "E0011",
                 "\"mse/%0\" appears twice in the object at \"sites\"");
}

TEST_F(Json, EnvelopeKeyTwiceIsRefused) {
  std::string text = envelope();
  ASSERT_EQ(text.front(), '{');
  expect_refused(check_envelope("{\"format\": 1," + text.substr(1)), 1, "E0011", "\"format\"");
}

TEST_F(Json, CommentsAreRefused) {
  expect_refused(run_realization("{\"format\": 1, // all f32\n \"default\": \"f32\"}"), 1, "E0012");
  expect_refused(run_realization("/* f32 */ {\"format\": 1}"), 1, "E0012");
  std::string text = envelope();
  expect_refused(check_envelope("// calibrated\n" + text), 1, "E0012");
}

TEST_F(Json, ByteOrderMarkIsRefused) {
  expect_refused(run_realization("\xEF\xBB\xBF{\"format\": 1}"), 1, "E0013");
  expect_refused(check_envelope("\xEF\xBB\xBF" + envelope()), 1, "E0013");
}

TEST_F(Json, EnvelopeNumberBeyondBinary64IsRefused) {
  std::string text = envelope();
  size_t at = text.find("\"output_max_abs\": ");
  ASSERT_NE(at, std::string::npos);
  at += 18;
  text.replace(at, text.find(',', at) - at, "1e999");
  expect_refused(check_envelope(text), 1, "E0014", "1e999");
}

TEST_F(Json, EnvelopeBindingThatIsNoNameIsRefused) {
  std::string text = envelope();
  size_t at = text.find("\"N\": \"4\"");
  ASSERT_NE(at, std::string::npos);
  expect_refused(check_envelope(std::string(text).replace(at, 3, "\"N(\"")), 1, "E0906", "bindings");
  expect_refused(check_envelope(std::string(text).replace(at + 5, 3, "\"4x\"")), 1, "E0906", "bindings.N");
}

TEST_F(Json, RealizationSiteIndexOf23DigitsIsRefused) {
  expect_refused(run_realization(R"({"format": 1, "sites": {"mse/%12345678901234567890123": "f64"}})"), 1,
                 "E0605");
}

TEST_F(Json, SafetensorsHeaderErrorIsCutInTheMessage) {
  std::string header = "{\"w\": \"" + std::string(1 << 20, 'x');  // a string never closed
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  write("w.safetensors", length + header);
  expect_refused(presk("tensors w.safetensors"), 1, "E0104");
}

TEST_F(Json, ProgramThatIsAFolderIsRefused) {
  std::filesystem::create_directory(path("program.psk"));
  expect_refused(presk("run program.psk --entry mse --dim N=4 --exact"), 1, "E0003", "folder");
}

}  // namespace
}  // namespace presk::hostile
