#include "common/sha256.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

using fl::common::Sha256;
using fl::common::sha256_hex;

namespace {

// Bytes i % 251, the pattern the reference digests below were computed for (Python's hashlib).
std::string pattern(std::size_t size) {
  std::string bytes(size, '\0');
  constexpr int kPrime = 251;
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(static_cast<int>(i % kPrime));
  return bytes;
}

}  // namespace

// Test vectors from FIPS 180-4's examples (NIST CSRC "SHA256.pdf") and the one-million-'a' vector.
TEST_CASE("SHA-256 matches the NIST test vectors", "[sha256]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 is the same whether fed at once or in pieces", "[sha256]") {
  // 55, 56 and 64 bytes sit on the padding boundaries, where an off-by-one would show.
  for (std::size_t length : {55u, 56u, 63u, 64u, 65u, 200u}) {
    std::string const text(length, 'x');
    Sha256 pieces;
    for (char c : text) pieces.update(std::string_view(&c, 1));
    CHECK(fl::common::to_hex(pieces.finish()) == sha256_hex(text));
  }
  CHECK(sha256_hex("a") != sha256_hex("b"));
}

TEST_CASE("SHA-256 handles every padding boundary", "[sha256]") {
  // 55 and 56 bytes straddle the one-block/two-block padding split; 63, 64, 65 the block edge.
  CHECK(sha256_hex(pattern(55)) == "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59");
  CHECK(sha256_hex(pattern(56)) == "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562");
  CHECK(sha256_hex(pattern(63)) == "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488");
  CHECK(sha256_hex(pattern(64)) == "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108");
  CHECK(sha256_hex(pattern(65)) == "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781");
  CHECK(sha256_hex(pattern(119)) == "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6");
  CHECK(sha256_hex(pattern(120)) == "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c");
}
