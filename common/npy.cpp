#include "common/npy.hpp"

#include <cuda_fp16.h>

#include <unistd.h>
#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace fl::common {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLength = 6;
constexpr std::size_t kHeaderAlignment = 64;  // NumPy pads the header so the data starts 64-aligned

[[noreturn]] void fail(std::filesystem::path const& path, std::string const& what) {
  throw NpyError(path.string() + ": " + what);
}

std::uint32_t read_le(unsigned char const* p, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= std::uint32_t(p[i]) << (8 * i);
  return v;
}

template <class T>
T load(unsigned char const* p, bool swap) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  if (swap)
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

double half_to_double(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return double(__half2float(__half(raw)));
}

std::uint16_t double_to_half_bits(double x) {
  __half_raw const raw = __half_raw(__float2half_rn(float(x)));
  return raw.x;
}

std::string header_value(std::string const& header, std::string const& key,
                         std::filesystem::path const& path) {
  std::smatch m;
  std::regex const re("['\"]" + key + "['\"]\\s*:\\s*('[^']*'|\"[^\"]*\"|True|False|\\([^)]*\\))");
  if (!std::regex_search(header, m, re)) fail(path, "header has no '" + key + "' entry");
  return m[1].str();
}

}  // namespace

NpyArray read_npy(std::filesystem::path const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open (missing file or no permission)");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < kMagicLength + 4 || std::memcmp(bytes.data(), kMagic, kMagicLength) != 0)
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  int const major = bytes[kMagicLength];
  std::size_t const length_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3) fail(path, "unsupported .npy format version " + std::to_string(major));
  std::size_t const header_start = kMagicLength + 2 + length_bytes;
  if (bytes.size() < header_start) fail(path, "truncated header");
  std::size_t const header_length = read_le(bytes.data() + kMagicLength + 2, length_bytes);
  if (bytes.size() < header_start + header_length) fail(path, "truncated header");
  std::string const header(bytes.begin() + std::ptrdiff_t(header_start),
                           bytes.begin() + std::ptrdiff_t(header_start + header_length));

  std::string descr = header_value(header, "descr", path);
  descr = descr.substr(1, descr.size() - 2);
  if (header_value(header, "fortran_order", path) == "True")
    fail(path, "Fortran-order array; save it in C order (numpy.ascontiguousarray)");
  std::string const shape_text = header_value(header, "shape", path);

  NpyArray a;
  std::regex const number("[0-9]+");
  for (auto it = std::sregex_iterator(shape_text.begin(), shape_text.end(), number);
       it != std::sregex_iterator(); ++it)
    a.shape.push_back(std::stoull(it->str()));
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '=' && descr[0] != '|') ||
      descr[1] != 'f')
    fail(path, "dtype '" + descr + "' is not allowed (float16, float32 or float64)");
  bool const big_endian_file = descr[0] == '>';
  bool const swap = big_endian_file != (std::endian::native == std::endian::big);
  std::size_t const item = std::size_t(descr[2] - '0');
  if (item == 2)
    a.dtype = "float16";
  else if (item == 4)
    a.dtype = "float32";
  else if (item == 8)
    a.dtype = "float64";
  else
    fail(path, "dtype '" + descr + "' is not allowed (float16, float32 or float64)");

  std::size_t count = 1;
  for (std::size_t s : a.shape) count *= s;
  std::size_t const data_start = header_start + header_length;
  if (bytes.size() - data_start != count * item)
    fail(path, "data holds " + std::to_string(bytes.size() - data_start) + " bytes, shape needs " +
                   std::to_string(count * item));
  a.values.resize(count);
  unsigned char const* p = bytes.data() + data_start;
  for (std::size_t i = 0; i < count; ++i, p += item) {
    if (item == 2)
      a.values[i] = half_to_double(load<std::uint16_t>(p, swap));
    else if (item == 4)
      a.values[i] = double(load<float>(p, swap));
    else
      a.values[i] = load<double>(p, swap);
  }
  return a;
}

void write_npy(std::filesystem::path const& path, std::vector<std::size_t> const& shape,
               std::vector<double> const& values, NpyDtype dtype) {
  std::size_t count = 1;
  for (std::size_t s : shape) count *= s;
  if (count != values.size()) throw NpyError(path.string() + ": shape does not match the number of values");
  std::ostringstream dict;
  char const* descr = dtype == NpyDtype::float16 ? "<f2" : dtype == NpyDtype::float32 ? "<f4" : "<f8";
  dict << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i)
    dict << shape[i] << (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dict << "), }";
  std::string header = dict.str();
  std::size_t const unpadded = kMagicLength + 2 + 2 + header.size() + 1;
  header.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  header.push_back('\n');

  std::filesystem::path const temp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw NpyError(path.string() + ": cannot write");
    out.write(kMagic, kMagicLength);
    char const version[2] = {1, 0};
    out.write(version, 2);
    char const length[2] = {char(header.size() & 0xff), char((header.size() >> 8) & 0xff)};
    out.write(length, 2);
    out.write(header.data(), std::streamsize(header.size()));
    for (double v : values) {
      if (dtype == NpyDtype::float16) {
        std::uint16_t const bits = double_to_half_bits(v);
        char const b[2] = {char(bits & 0xff), char(bits >> 8)};
        out.write(b, 2);
      } else if (dtype == NpyDtype::float32) {
        float const f = float(v);
        out.write(reinterpret_cast<char const*>(&f), sizeof f);
      } else {
        out.write(reinterpret_cast<char const*>(&v), sizeof v);
      }
    }
    if (!out) throw NpyError(path.string() + ": write failed");
  }
  std::filesystem::rename(temp, path);
}

}  // namespace fl::common
