// The corpus: a text (the King James Bible or any file) turned into a character vocabulary
// and two safetensors files of token windows, train and val. docs/data.md describes the
// files; docs/errors.md the codes E0700-E0749.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace presk::train {

// The command that dumps the King James Bible (Debian's bible-kjv), one verse a line as
// "Ge1:1 In the beginning ...".
inline constexpr std::string_view kKjvProgram = "bible";
inline constexpr std::string_view kKjvArguments = "-f Gen1:1-Rev22:21";
// The SHA-256 of the stripped KJV text (4,137,850 bytes) from bible-kjv 4.38.
inline constexpr std::string_view kKjvSha256 =
    "b5c4940bcfeee072c0935b5200d0f9d88a00a0199cb0961d16133458fcdfae5d";

// The name of the tensor of windows: the argument name of examples/gpt.psk's `loss`.
inline constexpr std::string_view kTokensTensorName = "tokens";
// Version of the token-file layout, the "format" metadata value.
inline constexpr int kTokenFileFormat = 1;

// A corpus's text and the name it goes by in messages and metadata.
struct CorpusText {
  std::string bytes;
  std::string name;  // "kjv", or the --text path as given
};

// Each line of `text` without its verse reference: everything up to and including the
// line's first space is removed (a line without a space stays), as `sed 's/^[^ ]* //'`.
std::string strip_verse_references(std::string_view text);

// The King James Bible, stripped of its references. E0700 when `bible` is not on the PATH,
// E0701 when it fails or prints nothing.
CorpusText read_kjv();
// A text file's bytes. E0702 when it cannot be read, E0703 when it is empty.
CorpusText read_text_file(const std::string& path);

// The character vocabulary: the distinct bytes of a text, sorted; token k is the k-th byte.
struct Vocabulary {
  std::vector<uint8_t> characters;    // ascending
  std::array<int32_t, 256> token_of;  // token id of each byte value, -1 when absent
  int32_t size() const { return static_cast<int32_t>(characters.size()); }
};

Vocabulary build_vocabulary(std::string_view text);
// The vocabulary as a JSON string literal (quotes included): byte b is the code point b
// (Latin-1), escaped as \" \\ \n \t \r or \u00XX for every other byte outside 0x20-0x7e.
std::string vocabulary_json(const Vocabulary& vocabulary);

// What `presk data prepare` asks for.
struct PrepareOptions {
  int64_t window = 256;  // W: tokens a sample predicts; a window holds W + 1 tokens
  double split = 0.9;    // train holds the first floor(bytes x split) bytes, val the rest
  std::string out_dir;   // created when missing
  std::string command;   // the canonical command, recorded in the metadata
  // Called at the start of each stage with what it does (the CLI shows it when slow).
  std::function<void(const std::string&)> progress;
};

// One written file: a contiguous part of the text cut into windows.
struct PreparedPart {
  std::string name;    // "train" or "val"
  std::string path;    // out_dir/NAME.safetensors
  uint64_t begin = 0;  // the part is bytes [begin, end) of the text
  uint64_t end = 0;
  int64_t windows = 0;  // S: the tensor is I32 [S, W + 1]
  uint64_t unused = 0;  // trailing tokens of the part in no window (< W)
  std::string file_sha256;
};

struct PrepareResult {
  std::string source;  // the text's name
  uint64_t source_bytes = 0;
  std::string source_sha256;
  Vocabulary vocabulary;
  std::vector<PreparedPart> parts;  // train, val
};

// Builds the vocabulary, checks that each part holds a window (E0704), creates the output
// folder (E0705) and writes train.safetensors and val.safetensors atomically. The bytes
// depend only on the text and on the options' window, split and command.
PrepareResult prepare_corpus(const CorpusText& text, const PrepareOptions& options);

}  // namespace presk::train
