#include "tuner/bench_table.hpp"

#include <cstdio>
#include <string_view>

#include "common/utc_time.hpp"

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

// One row's fields in the CSV's column order, each named once for both forms. A word (family, dtype, ...)
// goes bare into the CSV; a text (config, check) may hold commas, so the CSV quotes it; both are JSON
// strings. Numbers and true/false go bare into both.
enum class Kind { number, word, text };
struct Field {
  char const* name;
  std::string value;
  Kind kind;
};

std::vector<Field> fields(BenchRow const& r) {
  auto integer = [](auto x) { return std::to_string(x); };
  return {
      {"family", r.family, Kind::word},
      {"config", r.config, Kind::text},
      {"dtype", r.dtype, Kind::word},
      {"mask", r.mask, Kind::word},
      {"direction", r.direction, Kind::word},
      {"batch", integer(r.batch), Kind::number},
      {"heads", integer(r.heads), Kind::number},
      {"seqlen", integer(r.seqlen), Kind::number},
      {"head_dim", integer(r.head_dim), Kind::number},
      {"median_ms", number(r.stats.median_ms), Kind::number},
      {"p20_ms", number(r.stats.p20_ms), Kind::number},
      {"p80_ms", number(r.stats.p80_ms), Kind::number},
      {"min_ms", number(r.stats.min_ms), Kind::number},
      {"max_ms", number(r.stats.max_ms), Kind::number},
      {"runs", integer(r.stats.runs), Kind::number},
      {"tflops", number(r.tflops), Kind::number},
      {"registers", integer(r.registers), Kind::number},
      {"spill_bytes", integer(r.spill_bytes), Kind::number},
      {"device_bytes", integer(r.device_bytes), Kind::number},
      {"check", r.check, Kind::text},
      {"heads_kv", integer(r.heads_kv), Kind::number},
      {"seqlen_k", integer(r.seqlen_k), Kind::number},
      {"passed", r.passed ? "true" : "false", Kind::number},
  };
}

// A field's CSV form: a text quoted, a word or number bare.
std::string csv_field(Field const& f) {
  return f.kind == Kind::text ? csv_quoted(f.value) : f.value;
}

// The columns that name a row's problem and config in the samples CSV, in fields()'s spelling.
constexpr char const* kSampleKeys[] = {"family", "config", "dtype",    "mask",     "direction", "batch",
                                       "heads",  "seqlen", "head_dim", "heads_kv", "seqlen_k"};
}  // namespace

std::string to_csv(std::vector<BenchRow> const& rows) {
  std::string out;
  for (auto const& f : fields(BenchRow{})) out += std::string(out.empty() ? "" : ",") + f.name;
  out += "\n";
  for (auto const& r : rows) {
    std::string line;
    for (auto const& f : fields(r)) {
      if (!line.empty()) line += ",";
      line += csv_field(f);
    }
    out += line + "\n";
  }
  return out;
}

std::string to_samples_csv(std::vector<BenchRow> const& rows) {
  auto problem_columns = [](BenchRow const& r) {
    std::string line;
    for (char const* key : kSampleKeys)
      for (auto const& f : fields(r))
        if (std::string_view(f.name) == key) line += (line.empty() ? "" : ",") + csv_field(f);
    return line;
  };
  std::string out;
  for (char const* key : kSampleKeys) out += std::string(out.empty() ? "" : ",") + key;
  out += ",run,input_set,ms,ended_utc\n";
  for (auto const& r : rows) {
    std::string const problem = problem_columns(r);
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      auto const& s = r.samples[i];
      int const set = r.input_sets > 0 ? s.launch % r.input_sets : 0;
      out += problem + "," + std::to_string(i) + "," + std::to_string(set) + "," + number(s.ms) + "," +
             common::iso_utc(s.ended, 6) + "\n";
    }
  }
  return out;
}

std::string to_json(std::vector<BenchRow> const& rows, std::string const& device, std::string const& date) {
  std::string out =
      "{\n  \"device\": " + json_string(device) + ",\n  \"date\": " + json_string(date) +
      ",\n  \"flops_convention\": \"fwd 4*b*h*n_q*n_k*d, /2 causal; bwd 2.5x\",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string object;
    for (auto const& f : fields(rows[i])) {
      object += object.empty() ? "{" : ", ";
      object += json_string(f.name) + ": " + (f.kind == Kind::number ? f.value : json_string(f.value));
    }
    out += "    " + object + "}" + (i + 1 < rows.size() ? ",\n" : "\n");
  }
  return out + "  ]\n}\n";
}

}  // namespace fl::tuner
