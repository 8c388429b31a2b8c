#include "tuner/tune/forward_store.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/sha256.hpp"
#include "device/run/host_tensors.hpp"

namespace fl::tuner {

namespace {

// The first line of a file, then O (16-bit encodings), LSE (float), the statistics' LSE and D (double), in
// this machine's byte order. A new layout, or a change to what the inputs or the reference compute, takes a
// new tag.
constexpr char kFormat[] = "flashlab-forward 1";

std::string header(device::Problem const& problem) {
  std::ostringstream out;
  out << kFormat << ' ' << problem.shape.q_elements() << ' ' << problem.shape.lse_elements() << '\n';
  return out.str();
}

template <class T>
void append(std::string& to, std::vector<T> const& values) {
  to.append(reinterpret_cast<char const*>(values.data()), values.size() * sizeof(T));
}

template <class T>
bool read(std::istream& in, std::vector<T>& values, std::size_t count) {
  values.resize(count);
  return bool(in.read(reinterpret_cast<char*>(values.data()), std::streamsize(count * sizeof(T))));
}

}  // namespace

std::filesystem::path ForwardStore::path_of(device::Problem const& problem, std::uint64_t seed) const {
  // describe() names the shape, dtype, mask and direction; dtype_key the FP8 options.
  std::string const key = std::string(kFormat) + "|" + device::describe(problem) + "|" +
                          device::dtype_key(problem) + "|make_normal_inputs seed " + std::to_string(seed);
  return dir_ / (common::sha256_hex(key).substr(0, 32) + ".forward");
}

std::optional<numerics::gpu::ForwardWithStatistics> ForwardStore::load(device::Problem const& problem,
                                                                       std::uint64_t seed) const {
  std::ifstream in(path_of(problem, seed), std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first) || first + '\n' != header(problem)) return std::nullopt;
  std::size_t const rows = problem.shape.lse_elements();
  std::vector<std::uint16_t> o;
  numerics::gpu::ForwardWithStatistics forward;
  numerics::RowStatistics statistics;
  if (!read(in, o, problem.shape.q_elements()) || !read(in, forward.forward.lse, rows) ||
      !read(in, statistics.lse, rows) || !read(in, statistics.delta, rows) ||
      in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
  forward.forward.o = device::decode_16bit(o, problem.dtype);
  forward.statistics = std::make_shared<numerics::RowStatistics const>(std::move(statistics));
  return forward;
}

std::optional<std::string> ForwardStore::save(device::Problem const& problem, std::uint64_t seed,
                                              numerics::gpu::ForwardWithStatistics const& forward) const {
  auto const& o = forward.forward.o;
  std::vector<std::uint16_t> const bits = device::encode_16bit(o, problem.dtype);
  std::vector<float> const back = device::decode_16bit(bits, problem.dtype);
  if (std::memcmp(back.data(), o.data(), o.size() * sizeof(float)) != 0)
    return "O is not exact in its 16-bit encoding";
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) return "cannot make " + dir_.string() + ": " + error.message();
  std::string content = header(problem);
  append(content, bits);
  append(content, forward.forward.lse);
  append(content, forward.statistics->lse);
  append(content, forward.statistics->delta);
  try {
    common::write_file_atomically(path_of(problem, seed), content);
  } catch (std::exception const& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace fl::tuner
