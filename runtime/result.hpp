#pragma once
// Stages as values: every step between source text and a running kernel (load source, compile, load
// module, get kernel, launch) returns a Result that holds either its value or an Error carrying the full
// log. Nothing in runtime/ throws for an expected failure (a syntax error, no driver, a corrupt CUBIN):
// the tuner compiles thousands of candidates and must record why each failed, not unwind.
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace fl::runtime {

struct Error {
  std::string stage;    // which step failed: "driver", "device", "source", "compile", "load", "launch", ...
  std::string message;  // one line, fit for a terminal
  std::string log;      // everything the tool said (full NVRTC log, offending source line); may be empty

  // "stage: message", the one line a command prints.
  std::string one_line() const { return stage.empty() ? message : stage + ": " + message; }
};

template <class T>
class Result;

namespace detail {
template <class R>
struct IsResult : std::false_type {};
template <class U>
struct IsResult<Result<U>> : std::true_type {};

// Reading the value of a failed stage is a programming error, not an expected failure: it throws so
// that it is loud in tests instead of undefined behaviour.
[[noreturn]] inline void throw_bad_access(Error const& error) {
  throw std::logic_error("value() of a failed stage: " + error.one_line());
}
}  // namespace detail

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;

  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return checked(); }
  T const& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  T const* operator->() const { return &const_cast<Result*>(this)->checked(); }

  Error const& error() const {
    if (ok()) throw std::logic_error("error() of a successful stage");
    return std::get<1>(state_);
  }

  // Chain the next stage: f(T) -> Result<U>; an error passes through untouched.
  template <class F>
  auto and_then(F&& f) && {
    using Next = std::invoke_result_t<F, T&&>;
    static_assert(detail::IsResult<Next>::value, "and_then needs a function returning a Result");
    if (!ok()) return Next(std::get<1>(std::move(state_)));
    return std::forward<F>(f)(std::get<0>(std::move(state_)));
  }

  // Map the value: f(T) -> U; an error passes through untouched.
  template <class F>
  auto transform(F&& f) && -> Result<std::invoke_result_t<F, T&&>> {
    if (!ok()) return std::get<1>(std::move(state_));
    return std::forward<F>(f)(std::get<0>(std::move(state_)));
  }

 private:
  T& checked() {
    if (!ok()) detail::throw_bad_access(std::get<1>(state_));
    return std::get<0>(state_);
  }
  std::variant<T, Error> state_;
};

// A stage with nothing to return but success or an Error (launch, copy, record an event).
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  void value() const {
    if (!ok()) detail::throw_bad_access(*error_);
  }
  Error const& error() const {
    if (ok()) throw std::logic_error("error() of a successful stage");
    return *error_;
  }

  template <class F>
  auto and_then(F&& f) && {
    using Next = std::invoke_result_t<F>;
    static_assert(detail::IsResult<Next>::value, "and_then needs a function returning a Result");
    if (!ok()) return Next(std::move(*error_));
    return std::forward<F>(f)();
  }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

}  // namespace fl::runtime
