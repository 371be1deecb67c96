// Safetensors: round trips of every element type (in memory and through files), reading a
// file laid out by another writer, mapped reads of a few-MB file, and malformed files, each
// refused with its own code (a crash or an internal error fails the test).
#include "support/safetensors.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "support/diagnostics.h"
#include "support/temp_folder.h"

namespace presk {
namespace {

using testing_support::TempFolder;

// A file from a header text and data bytes; the length prefix is the header's size unless
// `claimed_length` says otherwise.
std::string make_file(const std::string& header, const std::string& data,
                      std::optional<uint64_t> claimed_length = std::nullopt) {
  uint64_t length = claimed_length.value_or(header.size());
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &length, 8);
  return bytes + header + data;
}

SafetensorsFile parse(const std::string& bytes) {
  return parse_safetensors(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                           "test.safetensors");
}

// A tensor of `type` with values that exercise its range (and specials for floats).
Tensor sample(ElementType type, std::vector<int64_t> shape) {
  Tensor tensor(type, std::move(shape));
  const double floats[] = {0.0,         -0.0,  1.5, -2.25,
                           3.0e38,      1e-40, 0.1, std::numeric_limits<double>::infinity(),
                           std::nan("")};
  for (uint64_t i = 0; i < tensor.element_count(); ++i) {
    if (facts(type).is_float)
      tensor.set(i, floats[i % std::size(floats)] * (1 + double(i / 9)));
    else
      tensor.set_integer(i, int64_t(i * 37 % 300) - 150 + (i == 1 ? INT64_MAX / 2 : 0));
  }
  return tensor;
}

void expect_same(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.type(), b.type());
  EXPECT_EQ(a.shape(), b.shape());
  EXPECT_EQ(a.axis_names(), b.axis_names());
  ASSERT_EQ(a.byte_size(), b.byte_size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byte_size()), 0) << type_name(a.type());
}

std::vector<Tensor> every_type() {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < kElementTypeCount; ++i) {
    tensors.push_back(sample(static_cast<ElementType>(i), {3, 5}));
  }
  tensors[0].set_axis_names({"row", "column"});
  tensors.push_back(sample(ElementType::i4, {7}));       // odd count of nibbles
  tensors.push_back(Tensor(ElementType::f32, {}));       // scalar
  tensors.push_back(Tensor(ElementType::bf16, {0, 3}));  // empty
  return tensors;
}

std::vector<NamedTensor> named(const std::vector<Tensor>& tensors) {
  std::vector<NamedTensor> items;
  for (size_t i = 0; i < tensors.size(); ++i) {
    items.push_back({fmt::format("t{}_{}", i, type_name(tensors[i].type())), tensors[i]});
  }
  return items;
}

TEST(Safetensors, EveryTypeRoundTripsThroughAFile) {
  TempFolder folder;
  std::vector<Tensor> tensors = every_type();
  std::vector<NamedTensor> items = named(tensors);
  write_safetensors(folder.file("all.safetensors"), items, {{"format", "pt"}});
  SafetensorsFile file = SafetensorsFile::open(folder.file("all.safetensors"));
  EXPECT_FALSE(file.is_memory_mapped());
  ASSERT_EQ(file.entries().size(), tensors.size());
  EXPECT_EQ(file.metadata().at("format"), "pt");
  for (const NamedTensor& item : items) expect_same(file.read(item.name), item.tensor);
  EXPECT_EQ(file.entry("t4_i4").file_dtype, "U8");
  EXPECT_EQ(file.entry("t8_bool").file_dtype, "BOOL");
  EXPECT_EQ(file.value(file.entry("t2_bf16"), 2), 1.5);
  // The file's bytes are exactly what serialize_safetensors makes, data 8-byte aligned.
  std::ifstream in(folder.file("all.safetensors"), std::ios::binary);
  std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, serialize_safetensors(items, {{"format", "pt"}}));
  uint64_t header_length;
  std::memcpy(&header_length, on_disk.data(), 8);
  EXPECT_EQ(header_length % 8, 0u);
}

TEST(Safetensors, ReadsAFileLaidOutByAnotherWriter) {
  // Unpadded header, keys in any order, tensors stored in reverse, a gap before one.
  float b[2] = {1.0f, -2.0f};
  int32_t a = 7;
  std::string data(2, 'x');
  data.append(reinterpret_cast<const char*>(b), 8);
  data.append(reinterpret_cast<const char*>(&a), 4);
  std::string header = R"({"b":{"shape":[2],"data_offsets":[2,10],"dtype":"F32"},)"
                       R"("__metadata__":{"format":"pt"},)"
                       R"("a":{"dtype":"I32","data_offsets":[10,14],"shape":[]}})";
  SafetensorsFile file = parse(make_file(header, data));
  EXPECT_EQ(file.read("b").get(1), -2.0);
  EXPECT_EQ(file.read("a").get_integer(0), 7);
  EXPECT_EQ(file.entries()[0].name, "a");
}

TEST(Safetensors, IntegersAreReadExactly) {
  // Through a double, 2^53 + 1 would read as 2^53 and 2^63 − 1 as 2^63 (−2^63 once converted).
  Tensor wide(ElementType::i64, {4});
  const int64_t values[4] = {(int64_t{1} << 53) + 1, INT64_MAX, INT64_MIN, -(int64_t{1} << 53) - 1};
  for (uint64_t i = 0; i < 4; ++i) wide.set_integer(i, values[i]);
  Tensor small(ElementType::i8, {2});
  small.set_integer(0, -128);
  small.set_integer(1, 127);
  SafetensorsFile file = parse(serialize_safetensors({{"wide", wide}, {"small", small}}));
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(file.integer(file.entry("wide"), i), values[i]);
  EXPECT_EQ(file.integer(file.entry("small"), 0), -128);
  EXPECT_EQ(file.integer(file.entry("small"), 1), 127);
}

TEST(Safetensors, LargeFilesAreMemoryMapped) {
  TempFolder folder;
  Tensor big(ElementType::f32, {1024, 1024});  // 4 MiB
  for (uint64_t i = 0; i < big.element_count(); i += 4099) big.set(i, double(i));
  big.set(big.element_count() - 1, -1.0);
  write_safetensors(folder.file("big.safetensors"), {{"big", big}});
  SafetensorsFile file = SafetensorsFile::open(folder.file("big.safetensors"));
  EXPECT_TRUE(file.is_memory_mapped());
  EXPECT_EQ(file.value(file.entry("big"), big.element_count() - 1), -1.0);
  expect_same(file.read("big"), big);
}

TEST(Safetensors, WriterRefusesBadNames) {
  Tensor t(ElementType::f32, {1});
  auto code_of = [&](std::vector<NamedTensor> items) {
    try {
      serialize_safetensors(items);
    } catch (const UserError& e) {
      return e.code();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(code_of({{"a", t}, {"a", t}}), "E0134");
  EXPECT_EQ(code_of({{"__metadata__", t}}), "E0134");
  EXPECT_EQ(code_of({{"", t}}), "E0134");
  EXPECT_EQ(code_of({{"a", t}}), "accepted");
}

TEST(Safetensors, MissingFileOrFolderIsRefused) {
  TempFolder folder;
  try {
    SafetensorsFile::open(folder.file("missing.safetensors"));
    FAIL() << "opened a missing file";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "E0100");
  }
  try {
    SafetensorsFile::open(folder.path());
    FAIL() << "opened a folder";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "E0100");
  }
}

struct Malformed {
  const char* what;
  std::string bytes;
  const char* code;
};

std::string f32_entry(const std::string& name, const std::string& shape, uint64_t begin,
                      uint64_t end, const std::string& dtype = "F32") {
  return fmt::format(R"("{}":{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}})", name, dtype,
                     shape, begin, end);
}

std::vector<Malformed> malformed_files() {
  const std::string data16(16, '\0');
  const std::string ok = f32_entry("a", "[2]", 0, 8);
  return {
      {"shorter than the length", std::string(5, '\0'), "E0102"},
      {"length past the end", make_file("{}", "", 100), "E0103"},
      {"length beyond the limit", make_file("{}", "", uint64_t(1) << 40), "E0126"},
      {"not JSON", make_file("{\"a\": ", data16), "E0104"},
      {"invalid UTF-8", make_file("{\"\xff\":1}", data16), "E0104"},
      {"nested too deeply", make_file("{\"a\":{\"shape\":[[[[1]]]]}}", data16), "E0104"},
      {"not an object", make_file("[1, 2]", data16), "E0105"},
      {"entry not an object", make_file("{\"a\": 5}", data16), "E0106"},
      {"dtype missing", make_file(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", data16), "E0107"},
      {"dtype a number", make_file(R"({"a":{"dtype":3,"shape":[2],"data_offsets":[0,8]}})", data16),
       "E0107"},
      {"shape not a list", make_file("{" + f32_entry("a", "\"2\"", 0, 8) + "}", data16), "E0108"},
      {"shape of floats", make_file("{" + f32_entry("a", "[2.0]", 0, 8) + "}", data16), "E0108"},
      {"offsets missing", make_file(R"({"a":{"dtype":"F32","shape":[2]}})", data16), "E0109"},
      {"offsets negative",
       make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}})", data16), "E0109"},
      {"unknown dtype", make_file("{" + f32_entry("a", "[2]", 0, 8, "Q7") + "}", data16), "E0110"},
      {"unsupported dtype", make_file("{" + f32_entry("a", "[4]", 0, 8, "F16") + "}", data16),
       "E0111"},
      {"negative dimension", make_file("{" + f32_entry("a", "[-2]", 0, 8) + "}", data16), "E0112"},
      {"element count overflow",
       make_file("{" + f32_entry("a", "[4294967296,4294967296,16]", 0, 8) + "}", data16), "E0113"},
      {"byte count overflow",
       make_file("{" + f32_entry("a", "[4611686018427387904]", 0, 8) + "}", data16), "E0113"},
      {"begin after end", make_file("{" + f32_entry("a", "[2]", 8, 0) + "}", data16), "E0114"},
      {"end past the data", make_file("{" + f32_entry("a", "[100]", 0, 400) + "}", data16),
       "E0115"},
      {"size mismatch", make_file("{" + f32_entry("a", "[3]", 0, 8) + "}", data16), "E0116"},
      {"overlap", make_file("{" + ok + "," + f32_entry("b", "[2]", 4, 12) + "}", data16), "E0117"},
      {"duplicate tensor", make_file("{" + ok + "," + ok + "}", data16), "E0118"},
      {"duplicate field",
       make_file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data16),
       "E0118"},
      {"metadata not strings", make_file("{\"__metadata__\":{\"k\":1}," + ok + "}", data16),
       "E0119"},
      {"metadata not an object", make_file("{\"__metadata__\":[]," + ok + "}", data16), "E0119"},
      {"i4 note of an F32",
       make_file("{\"__metadata__\":{\"presk:i4:a\":\"[4]\"}," + ok + "}", data16), "E0122"},
      {"i4 note of a missing tensor",
       make_file("{\"__metadata__\":{\"presk:i4:zz\":\"[4]\"}," + ok + "}", data16), "E0122"},
      {"i4 note with the wrong count",
       make_file(
           "{\"__metadata__\":{\"presk:i4:a\":\"[5]\"}," + f32_entry("a", "[2]", 0, 2, "U8") + "}",
           data16),
       "E0122"},
      {"axes note with the wrong rank",
       make_file("{\"__metadata__\":{\"presk:axes:a\":\"[\\\"x\\\",\\\"y\\\"]\"}," + ok + "}",
                 data16),
       "E0123"},
      {"axes note not JSON",
       make_file("{\"__metadata__\":{\"presk:axes:a\":\"[x\"}," + ok + "}", data16), "E0123"},
  };
}

TEST(Safetensors, MalformedFilesAreRefusedWithTheirOwnCode) {
  std::set<std::string> codes;
  for (const Malformed& bad : malformed_files()) {
    try {
      parse(bad.bytes);
      ADD_FAILURE() << bad.what << ": accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.code(), bad.code) << bad.what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("test.safetensors"), std::string::npos) << bad.what;
      codes.insert(e.code());
    }
  }
  EXPECT_GE(codes.size(), 20u);
}

TEST(Safetensors, ErrorsNameTheTensorAndTheProblem) {
  try {
    parse(make_file("{" + f32_entry("layer.w", "[3]", 0, 8) + "}", std::string(16, '\0')));
    FAIL();
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("`layer.w`"), std::string::npos) << message;
    EXPECT_NE(message.find("needs 12 bytes"), std::string::npos) << message;
  }
}

TEST(Safetensors, ReadingRefusesBadBoolsAndUnknownNames) {
  std::string bytes =
      make_file("{" + f32_entry("b", "[3]", 0, 3, "BOOL") + "}", std::string("\x01\x00\x02", 3));
  SafetensorsFile file = parse(bytes);
  EXPECT_EQ(file.value(file.entry("b"), 0), 1.0);
  try {
    file.read("b");
    FAIL() << "read a BOOL byte of 2";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "E0121");
  }
  try {
    file.read("nope");
    FAIL() << "read a missing tensor";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "E0120");
    EXPECT_NE(std::string(e.what()).find("`b`"), std::string::npos);
  }
}

TEST(Safetensors, TruncatedValidFilesNeverCrash) {
  std::vector<Tensor> tensors = every_type();
  std::string bytes = serialize_safetensors(named(tensors));
  for (size_t size = 0; size < bytes.size(); size += 3) {
    try {
      SafetensorsFile file = parse(bytes.substr(0, size));
      for (const SafetensorsEntry& entry : file.entries()) file.read(entry);
    } catch (const UserError&) {
    }
  }
}

}  // namespace
}  // namespace presk
