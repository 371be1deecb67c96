// SHA-256 (FIPS 180-4): the fingerprint presk records for a corpus's source text, a program
// (checkpoints, envelopes) and any file that must name the exact bytes it came from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace presk {

// An incremental SHA-256: feed bytes with update(), then take the digest once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
  // The 32-byte digest. Ends the hash: call at most once.
  std::array<uint8_t, 32> finish();
  // The digest as 64 lowercase hex digits. Ends the hash.
  std::string finish_hex();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};  // bytes not yet compressed
  size_t block_size_ = 0;            // how many of block_ are filled
  uint64_t total_bytes_ = 0;         // message length so far
};

// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

// The SHA-256 of a file's bytes, read in blocks; E0100 when it cannot be opened or read.
std::string sha256_file(const std::string& path);

}  // namespace presk
