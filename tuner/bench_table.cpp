#include "tuner/bench_table.hpp"

#include <cstdio>

namespace fl::tuner {

namespace {
std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}
std::string csv_quoted(std::string const& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}
std::string json_string(std::string const& s) {
  std::string out = "\"";
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) {  // JSON forbids raw control characters in a string
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
      out += buf;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string to_csv(std::vector<BenchRow> const& rows) {
  std::string out =
      "family,config,dtype,mask,direction,batch,heads,seqlen,head_dim,median_ms,p20_ms,p80_ms,min_ms,max_ms,"
      "runs,"
      "tflops,registers,spill_bytes,device_bytes,check,heads_kv,seqlen_k,passed\n";
  for (auto const& r : rows) {
    out += r.family + "," + csv_quoted(r.config) + "," + r.dtype + "," + r.mask + "," + r.direction + "," +
           std::to_string(r.batch) + "," + std::to_string(r.heads) + "," + std::to_string(r.seqlen) + "," +
           std::to_string(r.head_dim) + "," + number(r.stats.median_ms) + "," + number(r.stats.p20_ms) + "," +
           number(r.stats.p80_ms) + "," + number(r.stats.min_ms) + "," + number(r.stats.max_ms) + "," +
           std::to_string(r.stats.runs) + "," + number(r.tflops) + "," + std::to_string(r.registers) + "," +
           std::to_string(r.spill_bytes) + "," + std::to_string(r.device_bytes) + "," + csv_quoted(r.check) +
           "," + std::to_string(r.heads_kv) + "," + std::to_string(r.seqlen_k) + "," +
           (r.passed ? "true" : "false") + "\n";
  }
  return out;
}

std::string to_json(std::vector<BenchRow> const& rows, std::string const& device, std::string const& date) {
  std::string out =
      "{\n  \"device\": " + json_string(device) + ",\n  \"date\": " + json_string(date) +
      ",\n  \"flops_convention\": \"fwd 4*b*h*n_q*n_k*d, /2 causal; bwd 2.5x\",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto const& r = rows[i];
    out += "    {\"family\": " + json_string(r.family) + ", \"config\": " + json_string(r.config) +
           ", \"dtype\": " + json_string(r.dtype) + ", \"mask\": " + json_string(r.mask) +
           ", \"direction\": " + json_string(r.direction) + ", \"batch\": " + std::to_string(r.batch) +
           ", \"heads\": " + std::to_string(r.heads) + ", \"seqlen\": " + std::to_string(r.seqlen) +
           ", \"head_dim\": " + std::to_string(r.head_dim) + ", \"median_ms\": " + number(r.stats.median_ms) +
           ", \"p20_ms\": " + number(r.stats.p20_ms) + ", \"p80_ms\": " + number(r.stats.p80_ms) +
           ", \"runs\": " + std::to_string(r.stats.runs) + ", \"tflops\": " + number(r.tflops) +
           ", \"registers\": " + std::to_string(r.registers) +
           ", \"spill_bytes\": " + std::to_string(r.spill_bytes) +
           ", \"device_bytes\": " + std::to_string(r.device_bytes) + ", \"check\": " + json_string(r.check) +
           ", \"heads_kv\": " + std::to_string(r.heads_kv) + ", \"seqlen_k\": " + std::to_string(r.seqlen_k) +
           ", \"passed\": " + (r.passed ? "true" : "false") + "}" + (i + 1 < rows.size() ? ",\n" : "\n");
  }
  return out + "  ]\n}\n";
}

}  // namespace fl::tuner
