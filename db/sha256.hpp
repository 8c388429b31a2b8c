#pragma once
// SHA-256 (FIPS 180-4) as lowercase hex, for the checksum stored beside each cached CUBIN.
//
// A corrupt or truncated blob must be told from a good one; a cryptographic hash makes an accidental
// match impossible in practice, and the hex digest equals `sha256sum` of the extracted CUBIN, so a
// human can check a row by hand. Speed is no concern: ~1 ms for a 200 KiB CUBIN.
#include <span>
#include <string>

namespace fl::db {

std::string sha256_hex(std::span<char const> bytes);

}  // namespace fl::db
