#include "runtime/sha256.hpp"

#include <catch2/catch.hpp>

#include <string>

using fl::runtime::Sha256;
using fl::runtime::sha256_hex;

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
    CHECK(fl::runtime::to_hex(pieces.finish()) == sha256_hex(text));
  }
  CHECK(sha256_hex("a") != sha256_hex("b"));
}
