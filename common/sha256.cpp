#include "common/sha256.hpp"

#include <algorithm>
#include <cstring>

namespace fl::common {
namespace {

// First 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4, 4.2.2).
constexpr std::array<std::uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// First 32 bits of the fractional parts of the square roots of the first 8 primes (FIPS 180-4, 5.3.3).
constexpr std::array<std::uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr std::size_t kBlockBytes = 64;
constexpr std::size_t kLengthBytes = 8;  // the message length in bits, big-endian, ends the padding

constexpr std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

}  // namespace

Sha256::Sha256() : state_(kInitialState) {}

Sha256& Sha256::update(std::string_view bytes) {
  auto const* data = reinterpret_cast<std::uint8_t const*>(bytes.data());
  std::size_t remaining = bytes.size();
  total_bytes_ += remaining;
  while (remaining > 0) {
    std::size_t const take = std::min(remaining, kBlockBytes - buffered_);
    std::memcpy(buffer_.data() + buffered_, data, take);
    buffered_ += take;
    data += take;
    remaining -= take;
    if (buffered_ == kBlockBytes) {
      compress(buffer_.data());
      buffered_ = 0;
    }
  }
  return *this;
}

Sha256::Digest Sha256::finish() {
  std::uint64_t const total_bits = total_bytes_ * 8;
  std::uint8_t const marker = 0x80;
  update(std::string_view(reinterpret_cast<char const*>(&marker), 1));
  std::uint8_t const zero = 0;
  while (buffered_ != kBlockBytes - kLengthBytes)
    update(std::string_view(reinterpret_cast<char const*>(&zero), 1));
  std::array<std::uint8_t, kLengthBytes> length{};
  for (std::size_t i = 0; i < kLengthBytes; ++i) {
    length[i] = static_cast<std::uint8_t>(total_bits >> (8 * (kLengthBytes - 1 - i)));
  }
  update(std::string_view(reinterpret_cast<char const*>(length.data()), length.size()));

  Digest digest{};
  for (std::size_t i = 0; i < state_.size(); ++i) {
    for (std::size_t b = 0; b < 4; ++b)
      digest[4 * i + b] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * b));
  }
  return digest;
}

void Sha256::compress(std::uint8_t const* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  for (std::size_t i = 16; i < 64; ++i) {
    std::uint32_t const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    std::uint32_t const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state_;
  for (std::size_t i = 0; i < 64; ++i) {
    std::uint32_t const sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    std::uint32_t const choose = (e & f) ^ (~e & g);
    std::uint32_t const t1 = h + sum1 + choose + kRoundConstants[i] + w[i];
    std::uint32_t const sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    std::uint32_t const majority = (a & b) ^ (a & c) ^ (b & c);
    std::uint32_t const t2 = sum0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  std::array<std::uint32_t, 8> const mixed = {a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < state_.size(); ++i) state_[i] += mixed[i];
}

std::string to_hex(Sha256::Digest const& digest) {
  constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (std::uint8_t byte : digest) {
    hex.push_back(kHexDigits[byte >> 4]);
    hex.push_back(kHexDigits[byte & 0xf]);
  }
  return hex;
}

std::string sha256_hex(std::string_view bytes) {
  return to_hex(Sha256().update(bytes).finish());
}

}  // namespace fl::common
