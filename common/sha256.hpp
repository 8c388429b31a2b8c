#pragma once
// SHA-256 (FIPS 180-4), written here because it is the basis of every cache key: a 64-bit hash would make
// an accidental collision between two kernel sources plausible over a long-lived cache, and a collision
// there means running the wrong CUBIN silently.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace fl::common {

class Sha256 {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  Sha256();
  Sha256& update(std::string_view bytes);
  Digest finish();  // the object is spent afterwards

 private:
  void compress(std::uint8_t const* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string to_hex(Sha256::Digest const& digest);

// Lower-case hex SHA-256 of `bytes` (64 characters).
std::string sha256_hex(std::string_view bytes);

}  // namespace fl::common
