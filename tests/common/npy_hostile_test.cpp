// The .npy reader against files a fuzzer or a hostile user writes: every one is refused with one line
// naming the file (NpyError), before anything of the claimed size is allocated; none crashes.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/npy.hpp"

using namespace fl::common;

namespace {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fl_npy_hostile_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A version 1.0 file with this exact header text (padded as NumPy pads, '\n' appended when `newline`),
// followed by `data_bytes` zero bytes.
std::filesystem::path write_raw(std::filesystem::path const& path, std::string header, std::size_t data_bytes,
                                bool newline = true) {
  std::size_t const total = 10 + header.size() + (newline ? 1 : 0);
  header.append((64 - total % 64) % 64, ' ');
  if (newline) header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  out.put(char(header.size() & 0xff));
  out.put(char(header.size() >> 8));
  out << header;
  out << std::string(data_bytes, '\0');
  return path;
}

std::string dict(std::string const& shape, std::string const& extra = "") {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", " + extra + "}";
}

}  // namespace

TEST_CASE("npy: a shape whose element count wraps 2^64 is refused, not truncated", "[common][npy]") {
  TempDir dir;
  // 2^32 * 2^32 * 1 * 16 wraps to 0 elements times 16: unchecked, this read 64 bytes and then indexed them
  // as a 2^68-element tensor (fa-check segfaulted, exit 139).
  auto const wrap = write_raw(dir.path / "wrap.npy", dict("(4294967296, 4294967296, 1, 16)"), 64);
  CHECK_THROWS_WITH(read_npy(wrap),
                    Catch::Contains("wrap.npy") && Catch::Contains("more than 2^64 elements"));
  // N = 2^59 + 16, D = 16: the byte count wraps to 16 * 16 * 4 (was read as a 16-row tensor).
  auto const bytes = write_raw(dir.path / "bytes.npy", dict("(576460752303423504, 16)"), 1024);
  CHECK_THROWS_WITH(read_npy(bytes), Catch::Contains("more than 2^64 bytes"));
  // A dimension beyond 64 bits (was "stoull").
  auto const huge = write_raw(dir.path / "huge.npy", dict("(99999999999999999999999, 16)"), 64);
  CHECK_THROWS_WITH(read_npy(huge), Catch::Contains("does not fit 64 bits"));
}

TEST_CASE("npy: the header is parsed strictly", "[common][npy]") {
  TempDir dir;
  // -1 was read as 1 (the sign ignored).
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "neg.npy", dict("(1, -1, 4, 16)"), 256)),
                    Catch::Contains("'-'"));
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "key.npy", dict("(4, 16)", "'foo': 1, "), 256)),
                    Catch::Contains("unexpected key 'foo'"));
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "twice.npy", dict("(4, 16)", "'shape': (4, 16), "), 256)),
                    Catch::Contains("repeated key 'shape'"));
  std::string with_nul = dict("(4, 16)");
  with_nul[with_nul.size() - 2] = '\0';
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "nul.npy", with_nul, 256)),
                    Catch::Contains("0x00") && Catch::Contains("printable ASCII"));
  std::string non_ascii = dict("(4, 16)");
  non_ascii[non_ascii.size() - 2] = char(0xe9);
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "latin.npy", non_ascii, 256)), Catch::Contains("0xe9"));
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "nonl.npy", dict("(4, 16)"), 256, false)),
                    Catch::Contains("newline"));
  CHECK_THROWS_WITH(
      read_npy(write_raw(dir.path / "noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", 0)),
      Catch::Contains("no 'shape'"));
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "int.npy",
                                       "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", 16)),
                    Catch::Contains("'<i4' is not allowed"));
  // A shape cut short at the header's end: the error named the closing '\n' raw, a two-line message
  // (found by tests/fuzz/npy_reader_fuzz_test.cpp under FA_SANITIZE=ON, seed 7).
  for (std::string const cut : {"{'descr': '<f4', 'fortran_order': False, 'shape': (",
                                "{'descr': '<f4', 'fortran_order': False, 'shape': (4, "}) {
    std::string header = cut;
    std::ofstream out(dir.path / "cut.npy", std::ios::binary);
    header += '\n';
    out.write("\x93NUMPY\x01\x00", 8);
    out.put(char(header.size() & 0xff));
    out.put(char(header.size() >> 8));
    out << header;
    out.close();
    try {
      read_npy(dir.path / "cut.npy");
      FAIL("a cut shape was read");
    } catch (NpyError const& e) {
      std::string const line = e.what();
      CHECK(line.find('\n') == std::string::npos);
      CHECK(line.find('\0') == std::string::npos);
      CHECK_THAT(line, Catch::Contains("closing newline"));
    }
  }
  // The well-formed neighbour of all of these is read.
  CHECK(read_npy(write_raw(dir.path / "ok.npy", dict("(4, 16)"), 256)).values.size() == 64);
  CHECK(read_npy(write_raw(dir.path / "one.npy", dict("(3,)"), 12)).shape == std::vector<std::size_t>{3});
}

TEST_CASE("npy: nothing of the claimed size is read or allocated before the magic and the length agree",
          "[common][npy]") {
  TempDir dir;
  // /dev/zero was read whole before the magic was looked at.
  auto const started = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(read_npy("/dev/zero"), Catch::Contains("not a .npy file"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
  CHECK_THROWS_WITH(read_npy(dir.path), Catch::Contains("is a folder"));  // was "basic_filebuf::underflow"
  // A header claiming 2^40 float32 values over 256 bytes of data: refused by the file's length.
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "claims.npy", dict("(1099511627776,)"), 256)),
                    Catch::Contains("data holds 256 bytes") && Catch::Contains("needs 4398046511104"));
  // Exact length: one byte too many is refused too.
  CHECK_THROWS_WITH(read_npy(write_raw(dir.path / "long.npy", dict("(4, 16)"), 257)),
                    Catch::Contains("data holds 257 bytes"));
  // A header length over NumPy's own bound is refused without reading it.
  {
    std::ofstream out(dir.path / "header.npy", std::ios::binary);
    out.write("\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
  }
  CHECK_THROWS_WITH(read_npy(dir.path / "header.npy"), Catch::Contains("header length 2147483647"));
}

TEST_CASE("npy: a pipe is read in chunks up to the length the header claims", "[common][npy]") {
  TempDir dir;
  auto const file = write_raw(dir.path / "ok.npy", dict("(4, 16)"), 256);
  auto const fifo = dir.path / "pipe.npy";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string const writer = "cat " + file.string() + " > " + fifo.string() + " &";
  REQUIRE(std::system(writer.c_str()) == 0);
  CHECK(read_npy(fifo).values.size() == 64);
  auto const short_file = write_raw(dir.path / "short.npy", dict("(4, 16)"), 100);
  std::string const short_writer = "cat " + short_file.string() + " > " + fifo.string() + " &";
  REQUIRE(std::system(short_writer.c_str()) == 0);
  CHECK_THROWS_WITH(read_npy(fifo), Catch::Contains("data holds 100 bytes"));
}
