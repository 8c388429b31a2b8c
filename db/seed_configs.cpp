#include "db/seed_configs.hpp"

#include <sstream>
#include <stdexcept>

#include "db/transaction.hpp"

namespace fl::db {

namespace {

// Version 1 (19 fields) had no CUDA driver API column; version 2 adds it last, so driver can hold the
// release nvidia-smi prints (580.159.04) beside the API version (13000). Both are read; version 2 is written.
constexpr std::string_view kHeaderV1 =
    "gpu\tcc\tsm_count\tdriver\tfamily\tdtype\thead_dim\tcausal\tdirection\tbatch\theads_q\theads_kv\tseqlen_"
    "q\t"
    "seqlen_k\tconfig\tmedian_ms\ttflops\tnvrtc\trecorded_at";
constexpr std::size_t kFieldsV1 = 19;
constexpr std::string_view kCudaApiColumn = "\tcuda_driver_api";

std::vector<std::string> split_tabs(std::string const& line) {
  std::vector<std::string> fields;
  std::stringstream ss(line);
  for (std::string field; std::getline(ss, field, '\t');) fields.push_back(field);
  return fields;
}

}  // namespace

std::vector<BestConfig> parse_seed_configs(std::string_view tsv) {
  std::vector<BestConfig> rows;
  std::stringstream in{std::string(tsv)};
  int line_number = 0;
  bool header_seen = false;
  std::size_t fields = kFieldsV1;
  std::string const header_v2 = std::string(kHeaderV1) + std::string(kCudaApiColumn);
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      if (line == header_v2)
        fields = kFieldsV1 + 1;
      else if (line != kHeaderV1)
        throw std::invalid_argument("seed configs line " + std::to_string(line_number) + ": not the header");
      header_seen = true;
      continue;
    }
    auto const f = split_tabs(line);
    if (f.size() != fields)
      throw std::invalid_argument("seed configs line " + std::to_string(line_number) + ": " +
                                  std::to_string(f.size()) + " fields, expected " + std::to_string(fields));
    try {
      BestConfig b;
      auto const dot = f[1].find('.');
      b.gpu = {f[0], std::stoi(f[1].substr(0, dot)), std::stoi(f[1].substr(dot + 1)), std::stoi(f[2]), f[3]};
      b.family = f[4];
      b.problem = {std::stoi(f[9]),
                   std::stoi(f[10]),
                   std::stoi(f[11]),
                   std::stoi(f[12]),
                   std::stoi(f[13]),
                   std::stoi(f[6]),
                   f[5],
                   f[7] == "1",
                   f[8]};
      b.config = f[14];
      b.median_ms = std::stod(f[15]);
      b.tflops = std::stod(f[16]);
      b.nvrtc_version = f[17];
      b.recorded_at = f[18];
      if (fields > kFieldsV1) b.gpu.cuda_driver_api = std::stoi(f[19]);
      b.source = "seed";
      rows.push_back(std::move(b));
    } catch (std::logic_error const&) {
      throw std::invalid_argument("seed configs line " + std::to_string(line_number) +
                                  ": a number does not parse");
    }
  }
  return rows;
}

std::string format_seed_configs(std::vector<BestConfig> const& rows) {
  std::ostringstream out;
  out << kHeaderV1 << kCudaApiColumn << '\n';
  for (auto const& b : rows) {
    auto const& p = b.problem;
    out << b.gpu.name << '\t' << b.gpu.cc_major << '.' << b.gpu.cc_minor << '\t' << b.gpu.sm_count << '\t'
        << b.gpu.driver_version << '\t' << b.family << '\t' << p.dtype << '\t' << p.head_dim << '\t'
        << (p.causal ? 1 : 0) << '\t' << p.direction << '\t' << p.batch << '\t' << p.heads_q << '\t'
        << p.heads_kv << '\t' << p.seqlen_q << '\t' << p.seqlen_k << '\t' << b.config << '\t' << b.median_ms
        << '\t' << b.tflops << '\t' << b.nvrtc_version << '\t' << b.recorded_at << '\t'
        << b.gpu.cuda_driver_api << '\n';
  }
  return out.str();
}

int load_seed_configs(Database& database, std::vector<BestConfig> const& seeds) {
  int inserted = 0;
  Transaction transaction(database);
  for (auto const& seed : seeds) {
    bool present = false;
    for (auto const& row : best_configs(database, seed.gpu.name))
      if (row.family == seed.family && row.problem.dtype == seed.problem.dtype &&
          row.problem.head_dim == seed.problem.head_dim && row.problem.causal == seed.problem.causal &&
          row.problem.direction == seed.problem.direction && row.problem.seqlen_q == seed.problem.seqlen_q &&
          row.problem.seqlen_k == seed.problem.seqlen_k && row.problem.batch == seed.problem.batch &&
          row.problem.heads_q == seed.problem.heads_q && row.gpu.driver_version == seed.gpu.driver_version)
        present = true;
    if (present) continue;
    store_best_config(database, seed);  // nested: a savepoint inside this transaction
    ++inserted;
  }
  transaction.commit();
  return inserted;
}

}  // namespace fl::db
