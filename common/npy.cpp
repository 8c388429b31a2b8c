#include "common/npy.hpp"

#include "common/atomic_file.hpp"
#include "common/npy_header.hpp"

#include <cuda_fp16.h>

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

namespace fl::common {

namespace {

using npy_detail::fail;
using npy_detail::Header;

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLength = 6;
constexpr std::size_t kHeaderAlignment = 64;  // NumPy pads the header so the data starts 64-aligned
// NumPy itself refuses headers over 10000 bytes unless told otherwise (numpy.load's max_header_size); a
// (B, H, N, D) header is under 128. Bounding it means a hostile length costs nothing.
constexpr std::size_t kMaxHeaderBytes = 10000;
constexpr std::size_t kReadChunkElements = std::size_t(1) << 20;  // values are converted 1 Mi at a time

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

std::string shape_text(std::vector<std::size_t> const& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

// Reads up to `bytes` bytes; returns how many came.
std::size_t read_some(std::istream& in, unsigned char* into, std::size_t bytes) {
  in.read(reinterpret_cast<char*>(into), std::streamsize(bytes));
  return std::size_t(in.gcount());
}

}  // namespace

NpyArray read_npy(std::filesystem::path const& path) {
  std::error_code error;
  auto const status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) fail(path, "no such file");
  if (status.type() == std::filesystem::file_type::directory) fail(path, "is a folder, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open (no permission?)");

  // The magic first: a device such as /dev/zero or a huge non-.npy file is refused after 10 bytes.
  unsigned char prefix[kMagicLength + 2 + 4] = {};
  std::size_t const got = read_some(in, prefix, kMagicLength + 2);
  if (got < kMagicLength || std::memcmp(prefix, kMagic, kMagicLength) != 0)
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  if (got < kMagicLength + 2) fail(path, "truncated header");
  int const major = prefix[kMagicLength];
  if (major < 1 || major > 3) fail(path, "unsupported .npy format version " + std::to_string(major));
  std::size_t const length_bytes = major == 1 ? 2 : 4;
  if (read_some(in, prefix + kMagicLength + 2, length_bytes) != length_bytes) fail(path, "truncated header");
  std::size_t const header_length = read_le(prefix + kMagicLength + 2, length_bytes);
  if (header_length > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(header_length) + " is over the " +
                   std::to_string(kMaxHeaderBytes) + " bytes a .npy header may have");
  std::string header_text(header_length, '\0');
  if (read_some(in, reinterpret_cast<unsigned char*>(header_text.data()), header_length) != header_length)
    fail(path, "truncated header");
  Header const header = npy_detail::parse_header(header_text, path);

  std::string const& descr = header.descr;
  if (header.fortran_order) fail(path, "Fortran-order array; save it in C order (numpy.ascontiguousarray)");
  if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '>' && descr[0] != '=' && descr[0] != '|') ||
      descr[1] != 'f' || (descr[2] != '2' && descr[2] != '4' && descr[2] != '8'))
    fail(path, "dtype '" + descr + "' is not allowed (float16, float32 or float64)");
  NpyArray a;
  a.shape = header.shape;
  bool const big_endian_file = descr[0] == '>';
  bool const swap = big_endian_file != (std::endian::native == std::endian::big);
  std::size_t const item = std::size_t(descr[2] - '0');
  a.dtype = item == 2 ? "float16" : item == 4 ? "float32" : "float64";

  // Overflow-checked: a shape whose product wraps 2^64 would otherwise look small.
  std::size_t count = 1, data_bytes = 0;
  for (std::size_t s : a.shape)
    if (__builtin_mul_overflow(count, s, &count))
      fail(path, "shape " + shape_text(a.shape) + " has more than 2^64 elements");
  if (__builtin_mul_overflow(count, item, &data_bytes))
    fail(path, "shape " + shape_text(a.shape) + " needs more than 2^64 bytes");
  std::size_t const data_start = kMagicLength + 2 + length_bytes + header_length;
  // A regular file tells its length: compare before allocating anything. A pipe is read in chunks, so
  // memory grows only with the bytes that really come.
  if (status.type() == std::filesystem::file_type::regular) {
    std::uintmax_t const size = std::filesystem::file_size(path, error);
    if (!error && size - data_start != data_bytes)
      fail(path, "data holds " + std::to_string(size - data_start) + " bytes, shape " + shape_text(a.shape) +
                     " needs " + std::to_string(data_bytes));
    a.values.reserve(count);
  }
  std::vector<unsigned char> chunk(std::min(count, kReadChunkElements) * item);
  std::size_t remaining = count;
  while (remaining > 0) {
    std::size_t const n = std::min(remaining, kReadChunkElements);
    std::size_t const bytes = read_some(in, chunk.data(), n * item);
    if (bytes != n * item)
      fail(path, "data holds " + std::to_string((count - remaining) * item + bytes) + " bytes, shape " +
                     shape_text(a.shape) + " needs " + std::to_string(data_bytes));
    unsigned char const* p = chunk.data();
    for (std::size_t i = 0; i < n; ++i, p += item) {
      if (item == 2)
        a.values.push_back(half_to_double(load<std::uint16_t>(p, swap)));
      else if (item == 4)
        a.values.push_back(double(load<float>(p, swap)));
      else
        a.values.push_back(load<double>(p, swap));
    }
    remaining -= n;
  }
  if (in.peek() != std::char_traits<char>::eof())
    fail(path, "data holds more bytes than shape " + shape_text(a.shape) + " needs (" +
                   std::to_string(data_bytes) + ")");
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

  std::string bytes;
  bytes.reserve(kMagicLength + 4 + header.size() + values.size() * 8);
  bytes.append(kMagic, kMagicLength);
  bytes.push_back(char(1));  // format version 1.0
  bytes.push_back(char(0));
  bytes.push_back(char(header.size() & 0xff));
  bytes.push_back(char((header.size() >> 8) & 0xff));
  bytes += header;
  for (double v : values) {
    if (dtype == NpyDtype::float16) {
      std::uint16_t const bits = double_to_half_bits(v);
      bytes.push_back(char(bits & 0xff));
      bytes.push_back(char(bits >> 8));
    } else if (dtype == NpyDtype::float32) {
      float const f = float(v);
      bytes.append(reinterpret_cast<char const*>(&f), sizeof f);
    } else {
      bytes.append(reinterpret_cast<char const*>(&v), sizeof v);
    }
  }
  try {
    write_file_atomically(path, bytes);
  } catch (std::runtime_error const& e) {
    throw NpyError(e.what());
  }
}

}  // namespace fl::common
