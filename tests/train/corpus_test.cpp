// The corpus library: stripping verse references, the vocabulary and its JSON form, and the
// windows prepare_corpus writes.
#include "train/corpus.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/error_code.h"
#include "support/atomic_file.h"
#include "support/diagnostics.h"
#include "support/safetensors.h"
#include "support/temp_folder.h"

namespace presk::train {
namespace {

using testing_support::TempFolder;

// The code of the UserError `action` throws, or "" when it throws none.
using testing::error_code;

TEST(StripVerseReferences, RemovesUpToTheFirstSpaceOfEachLine) {
  EXPECT_EQ(strip_verse_references("Ge1:1 In the beginning.\nGe1:2 And the earth.\n"),
            "In the beginning.\nAnd the earth.\n");
  // As sed 's/^[^ ]* //': a line without a space stays, a leading space goes, the last
  // line may lack its newline, empty lines stay.
  EXPECT_EQ(strip_verse_references("nospace\n lead\n\nRe22:21 Amen."), "nospace\nlead\n\nAmen.");
  EXPECT_EQ(strip_verse_references(""), "");
}

TEST(Vocabulary, SortedDistinctBytes) {
  Vocabulary vocabulary = build_vocabulary("banana\n");
  EXPECT_EQ(vocabulary.characters, (std::vector<uint8_t>{'\n', 'a', 'b', 'n'}));
  EXPECT_EQ(vocabulary.size(), 4);
  EXPECT_EQ(vocabulary.token_of['\n'], 0);
  EXPECT_EQ(vocabulary.token_of['n'], 3);
  EXPECT_EQ(vocabulary.token_of['z'], -1);
}

// Every byte becomes one code point of a valid JSON string, so readers map it back.
TEST(Vocabulary, JsonEscapesEveryByte) {
  std::string bytes = "A\"\\\n\t\r";
  bytes += '\x01';
  bytes += '\x7f';
  bytes += '\xe9';
  Vocabulary vocabulary = build_vocabulary(bytes);
  std::string json = vocabulary_json(vocabulary);
  EXPECT_EQ(json, "\"\\u0001\\t\\n\\r\\\"A\\\\\\u007f\\u00e9\"");
  std::string decoded = nlohmann::json::parse(json).get<std::string>();
  EXPECT_EQ(decoded, "\x01\t\n\r\"A\\\x7f\xc3\xa9");  // e9 is U+00E9, two bytes in UTF-8
}

TEST(PrepareCorpus, WindowsTileThePartsSharingOneToken) {
  TempFolder folder;
  CorpusText text{"abcdefghijklmnopqrstuvwxyz", "letters"};
  PrepareOptions options{4, 0.5, folder.file("out"), "test", {}};
  PrepareResult result = prepare_corpus(text, options);
  ASSERT_EQ(result.parts.size(), 2u);
  const PreparedPart& train = result.parts[0];
  EXPECT_EQ(train.end, 13u);
  EXPECT_EQ(train.windows, 3);  // (13 - 1) / 4
  EXPECT_EQ(train.unused, 0u);
  const PreparedPart& val = result.parts[1];
  EXPECT_EQ(val.begin, 13u);
  EXPECT_EQ(val.windows, 3);
  SafetensorsFile file = SafetensorsFile::open(val.path);
  Tensor windows = file.read(kTokensTensorName);
  ASSERT_EQ(windows.shape(), (std::vector<int64_t>{3, 5}));
  // Row k holds the tokens of bytes 13 + 4k .. 13 + 4k + 4; token of letter c is c - 'a'.
  for (int64_t row = 0; row < 3; ++row) {
    for (int64_t position = 0; position < 5; ++position) {
      EXPECT_EQ(windows.get_integer(row * 5 + position), 13 + 4 * row + position);
    }
  }
}

TEST(PrepareCorpus, Errors) {
  TempFolder folder;
  PrepareOptions options{8, 0.9, folder.file("out"), "test", {}};
  EXPECT_EQ(error_code([&] { prepare_corpus({"", "empty"}, options); }), "E0703");
  // 20 characters: val gets 2, fewer than a window of 9.
  EXPECT_EQ(error_code([&] { prepare_corpus({std::string(20, 'x'), "short"}, options); }), "E0704");
  // The output folder would be inside a regular file.
  write_file_atomically(folder.file("file"), "x");
  options.out_dir = folder.file("file") + "/out";
  options.window = 2;
  EXPECT_EQ(error_code([&] { prepare_corpus({std::string(100, 'x'), "long"}, options); }), "E0705");
  EXPECT_EQ(error_code([&] { read_text_file(folder.file("missing.txt")); }), "E0702");
  EXPECT_EQ(error_code([&] { read_text_file(folder.path()); }), "E0702");
}

}  // namespace
}  // namespace presk::train
