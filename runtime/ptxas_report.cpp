#include "runtime/ptxas_report.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace fl::runtime {
namespace {

std::string_view trim(std::string_view text) {
  auto const is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// "ptxas info    : Used 8 registers" -> "Used 8 registers"; "ptxas         .     0 bytes stack frame"
// -> "0 bytes stack frame". ptxas pads with a varying number of spaces, so strip the marker, not columns.
// Older nvcc logs print the stack line bare ("    0 bytes stack frame, ..."): kept as it is.
std::string_view message_of(std::string_view line) {
  line = trim(line);
  if (!line.starts_with("ptxas")) return line;
  line.remove_prefix(5);
  auto const marker = line.find_first_of(":.");
  if (marker == std::string_view::npos) return {};
  return trim(line.substr(marker + 1));
}

// "976 bytes stack frame" -> {976, "bytes stack frame"}; "used 0 barriers" -> {0, "barriers"}.
struct Quantity {
  std::size_t value = 0;
  std::string_view unit;
};

std::optional<Quantity> parse_quantity(std::string_view item) {
  item = trim(item);
  for (std::string_view prefix : {"Used ", "used "}) {
    if (item.starts_with(prefix)) item.remove_prefix(prefix.size());
  }
  Quantity quantity;
  auto const [end, error] = std::from_chars(item.data(), item.data() + item.size(), quantity.value);
  if (error != std::errc{} || end == item.data()) return std::nullopt;
  quantity.unit = trim(item.substr(static_cast<std::size_t>(end - item.data())));
  return quantity;
}

std::vector<Quantity> parse_quantities(std::string_view message) {
  std::vector<Quantity> quantities;
  while (!message.empty()) {
    auto const comma = message.find(',');
    if (auto q = parse_quantity(message.substr(0, comma))) quantities.push_back(*q);
    if (comma == std::string_view::npos) break;
    message.remove_prefix(comma + 1);
  }
  return quantities;
}

// The name between the first pair of single quotes, or the rest of the text when unquoted.
std::string name_after(std::string_view text) {
  text = trim(text);
  if (text.starts_with('\'')) {
    auto const close = text.find('\'', 1);
    return std::string(text.substr(1, close == std::string_view::npos ? std::string_view::npos : close - 1));
  }
  return std::string(text.substr(0, text.find_first_of(" \t")));
}

class ReportBuilder {
 public:
  KernelResources& function(std::string const& name) {
    auto it = std::find_if(report_.functions.begin(), report_.functions.end(),
                           [&](KernelResources const& f) { return f.function == name; });
    if (it == report_.functions.end()) {
      report_.functions.push_back(KernelResources{});
      report_.functions.back().function = name;
      it = report_.functions.end() - 1;
    }
    current_ = static_cast<std::size_t>(it - report_.functions.begin());
    return *it;
  }
  KernelResources* current() { return current_ ? &report_.functions[*current_] : nullptr; }
  PtxasReport take() { return std::move(report_); }

 private:
  PtxasReport report_;
  std::optional<std::size_t> current_;
};

void apply_stack_line(KernelResources& f, std::vector<Quantity> const& quantities) {
  for (auto const& q : quantities) {
    if (q.unit == "bytes stack frame") f.stack_frame_bytes = q.value;
    if (q.unit == "bytes spill stores") f.spill_store_bytes = q.value;
    if (q.unit == "bytes spill loads") f.spill_load_bytes = q.value;
  }
}

void apply_usage_line(KernelResources& f, std::vector<Quantity> const& quantities) {
  f.constant_bytes = 0;
  for (auto const& q : quantities) {
    if (q.unit == "registers") f.registers = static_cast<int>(q.value);
    if (q.unit == "barriers") f.barriers = static_cast<int>(q.value);
    if (q.unit == "bytes smem") f.shared_bytes = q.value;
    if (q.unit.starts_with("bytes cmem[")) f.constant_bytes += q.value;
  }
}

}  // namespace

PtxasReport parse_ptxas_report(std::string_view log) {
  constexpr std::string_view kEntry = "Compiling entry function";
  constexpr std::string_view kProperties = "Function properties for";
  ReportBuilder builder;
  while (!log.empty()) {
    auto const newline = log.find('\n');
    std::string_view const message = message_of(log.substr(0, newline));
    log.remove_prefix(newline == std::string_view::npos ? log.size() : newline + 1);

    if (message.starts_with(kEntry)) {
      builder.function(name_after(message.substr(kEntry.size()))).is_entry = true;
    } else if (message.starts_with(kProperties)) {
      builder.function(name_after(message.substr(kProperties.size())));
    } else if (message.find("bytes stack frame") != std::string_view::npos) {
      if (auto* f = builder.current()) apply_stack_line(*f, parse_quantities(message));
    } else if (message.starts_with("Used ")) {
      if (auto* f = builder.current()) apply_usage_line(*f, parse_quantities(message));
    }
  }
  return builder.take();
}

KernelResources const* PtxasReport::find(std::string_view function) const {
  auto const it = std::find_if(functions.begin(), functions.end(),
                               [&](KernelResources const& f) { return f.function == function; });
  return it == functions.end() ? nullptr : &*it;
}

std::vector<KernelResources> PtxasReport::entries() const {
  std::vector<KernelResources> kernels;
  std::copy_if(functions.begin(), functions.end(), std::back_inserter(kernels),
               [](KernelResources const& f) { return f.is_entry; });
  return kernels;
}

}  // namespace fl::runtime
