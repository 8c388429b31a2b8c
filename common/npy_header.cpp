#include "common/npy_header.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>

#include "common/npy.hpp"

namespace fl::common::npy_detail {

[[noreturn]] void fail(std::filesystem::path const& path, std::string const& what) {
  throw NpyError(path.string() + ": " + what);
}

namespace {

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::filesystem::path const& path) : text_(text), path_(path) {}

  Header parse() {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      auto const c = static_cast<unsigned char>(text_[i]);
      bool const last = i + 1 == text_.size();
      if (last && c == '\n') break;
      if (c < 0x20 || c > 0x7e)
        fail(path_, "header byte " + std::to_string(i) + " is " + describe_byte(c) +
                        " (a .npy header is printable ASCII ending in a newline)");
      if (last) fail(path_, "header does not end with a newline");
    }
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_spaces();
      if (peek() == '}') break;
      std::string const key = quoted();
      skip_spaces();
      expect(':');
      skip_spaces();
      if (key == "descr" && !seen_descr) {
        h.descr = quoted();
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_order) {
        h.fortran_order = boolean();
        seen_order = true;
      } else if (key == "shape" && !seen_shape) {
        h.shape = tuple();
        seen_shape = true;
      } else {
        bool const known = key == "descr" || key == "fortran_order" || key == "shape";
        fail(path_, "header has " + std::string(known ? "a repeated" : "an unexpected") + " key '" + key +
                        "' (allowed once each: descr, fortran_order, shape)");
      }
      skip_spaces();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      skip_spaces();
      if (peek() != '}') fail(path_, "header dict is malformed at byte " + std::to_string(at_));
    }
    ++at_;
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n')) ++at_;
    if (at_ != text_.size()) fail(path_, "header has bytes after its dict at byte " + std::to_string(at_));
    if (!seen_descr) fail(path_, "header has no 'descr' entry");
    if (!seen_order) fail(path_, "header has no 'fortran_order' entry");
    if (!seen_shape) fail(path_, "header has no 'shape' entry");
    return h;
  }

 private:
  static std::string describe_byte(unsigned char c) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "0x%02x", unsigned(c));
    return buffer;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  // The byte at the parse position as an error shows it: quoted when printable, else named, so that the
  // error stays one line (a shape cut short ends at the header's closing newline: a raw '\n' in the
  // message made it two).
  std::string shown_here() const {
    if (at_ >= text_.size()) return "the end of the header";
    auto const c = static_cast<unsigned char>(text_[at_]);
    if (c >= 0x20 && c <= 0x7e) return "'" + std::string(1, char(c)) + "'";
    return at_ + 1 == text_.size() ? "the header's closing newline" : describe_byte(c);
  }
  void skip_spaces() {
    while (peek() == ' ') ++at_;
  }
  void expect(char c) {
    if (peek() != c)
      fail(path_, "header dict is malformed at byte " + std::to_string(at_) + " (expected '" +
                      std::string(1, c) + "')");
    ++at_;
  }
  std::string quoted() {
    char const quote = peek();
    if (quote != '\'' && quote != '"') expect('\'');
    auto const close = text_.find(quote, at_ + 1);
    if (close == std::string_view::npos) fail(path_, "header has an unterminated string");
    std::string value(text_.substr(at_ + 1, close - at_ - 1));
    at_ = close + 1;
    return value;
  }
  bool boolean() {
    for (auto const& [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}})
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return value;
      }
    fail(path_, "header's fortran_order is neither True nor False");
  }
  std::vector<std::size_t> tuple() {
    expect('(');
    std::vector<std::size_t> dims;
    while (true) {
      skip_spaces();
      if (peek() == ')') break;
      std::size_t const start = at_;
      while (peek() >= '0' && peek() <= '9') ++at_;
      std::string_view const digits = text_.substr(start, at_ - start);
      std::size_t dim = 0;
      auto const [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), dim);
      if (digits.empty())
        fail(path_, "shape has " + shown_here() + " where a dimension should be (dimensions " +
                        "are non-negative whole numbers)");
      if (ec != std::errc() || end != digits.data() + digits.size())
        fail(path_, "shape dimension " + std::string(digits) + " does not fit 64 bits");
      dims.push_back(dim);
      skip_spaces();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      skip_spaces();
      if (peek() != ')') fail(path_, "shape tuple is malformed at byte " + std::to_string(at_));
    }
    ++at_;
    return dims;
  }

  std::string_view text_;
  std::filesystem::path const& path_;
  std::size_t at_ = 0;
};

}  // namespace

Header parse_header(std::string_view text, std::filesystem::path const& path) {
  return HeaderParser(text, path).parse();
}

}  // namespace fl::common::npy_detail
