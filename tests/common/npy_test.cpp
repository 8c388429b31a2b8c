#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/npy.hpp"

using namespace fl::common;

namespace {

std::filesystem::path temp_dir(std::string const& name) {
  auto dir = std::filesystem::temp_directory_path() / ("fl_npy_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// Exactly the bytes numpy.save(path, np.arange(6, dtype='<f4').reshape(2, 3)) writes (format 1.0): magic,
// version, little-endian header length, the dict padded with spaces to a multiple of 64 bytes, '\n'.
void write_like_numpy(std::filesystem::path const& path) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::size_t const total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY", 6);
  out.put(char(1));
  out.put(char(0));
  out.put(char(header.size() & 0xff));
  out.put(char(header.size() >> 8));
  out << header;
  for (int i = 0; i < 6; ++i) {
    float const f = float(i) * 0.5f;
    unsigned char b[4];
    std::memcpy(b, &f, 4);
    out.write(reinterpret_cast<char const*>(b), 4);  // x86: already little-endian
  }
}

}  // namespace

TEST_CASE("reads a .npy file written byte by byte as NumPy does", "[common][npy]") {
  auto const dir = temp_dir("numpy");
  write_like_numpy(dir / "a.npy");
  CHECK(std::filesystem::file_size(dir / "a.npy") == 128 + 24);  // 10 + 58-char dict + padding + '\n' = 128
  NpyArray const a = read_npy(dir / "a.npy");
  CHECK(a.dtype == "float32");
  CHECK(a.shape == std::vector<std::size_t>{2, 3});
  CHECK(a.values == std::vector<double>{0.0, 0.5, 1.0, 1.5, 2.0, 2.5});
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy write/read round-trips float16, float32, float64 and 1-d shapes", "[common][npy]") {
  auto const dir = temp_dir("roundtrip");
  std::vector<double> const values = {1.0, -2.5, 0.1, 65504.0, 1e-7, 3.0};
  for (NpyDtype dt : {NpyDtype::float16, NpyDtype::float32, NpyDtype::float64}) {
    write_npy(dir / "x.npy", {1, 2, 3, 1}, values, dt);
    NpyArray const a = read_npy(dir / "x.npy");
    CHECK(a.shape == std::vector<std::size_t>{1, 2, 3, 1});
    for (std::size_t i = 0; i < values.size(); ++i) {
      double const tol = dt == NpyDtype::float16 ? 1e-3 : dt == NpyDtype::float32 ? 1e-7 : 0.0;
      CHECK(a.values[i] == Approx(values[i]).epsilon(tol).margin(dt == NpyDtype::float16 ? 6e-8 : 0.0));
    }
    // The data starts at a multiple of 64 bytes, as NumPy requires.
    CHECK((std::filesystem::file_size(dir / "x.npy") - values.size() * (dt == NpyDtype::float16   ? 2
                                                                        : dt == NpyDtype::float32 ? 4
                                                                                                  : 8)) %
              64 ==
          0);
  }
  write_npy(dir / "v.npy", {3}, {1.0, 2.0, 3.0}, NpyDtype::float64);
  CHECK(read_npy(dir / "v.npy").shape == std::vector<std::size_t>{3});
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy reader refuses what it cannot read, naming the file", "[common][npy]") {
  auto const dir = temp_dir("bad");
  CHECK_THROWS_WITH(read_npy(dir / "missing.npy"), Catch::Contains("missing.npy"));
  {
    std::ofstream out(dir / "junk.npy", std::ios::binary);
    out << "not numpy";
  }
  CHECK_THROWS_WITH(read_npy(dir / "junk.npy"), Catch::Contains("not a .npy"));
  write_npy(dir / "ok.npy", {4}, {1, 2, 3, 4}, NpyDtype::float32);
  std::filesystem::resize_file(dir / "ok.npy", std::filesystem::file_size(dir / "ok.npy") - 4);
  CHECK_THROWS_WITH(read_npy(dir / "ok.npy"), Catch::Contains("bytes"));
  std::filesystem::remove_all(dir);
}
