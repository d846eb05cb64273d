// A small error type for the GPU side, which may not depend on LLVM: a Status
// (success or a message) and an Expected<T> (a value or a Status).
#ifndef CUDAL1_EVAL_ERROR_H
#define CUDAL1_EVAL_ERROR_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace cudal1 {

/// Success, or a failure with a human-readable message. Unlike llvm::Error
/// it need not be checked; test it with ok().
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.text = std::move(message);
    return s;
  }
  bool ok() const { return !failed; }
  const std::string &message() const { return text; }
  /// Prefixes the message with context ("reading X: ...").
  Status withContext(const std::string &context) const {
    return ok() ? *this : error(context + ": " + text);
  }

private:
  bool failed = false;
  std::string text;
};

/// Builds a message from streamable parts: makeError("bad line ", n).
template <typename... Parts> Status makeError(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Status::error(os.str());
}

/// A value of type T or the Status that explains why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T v) : value(std::move(v)) {}
  Expected(Status s) : status(std::move(s)) {
    assert(!status.ok() && "Expected built from a successful Status");
  }
  bool ok() const { return value.has_value(); }
  const Status &error() const { return status; }
  T &operator*() { return *value; }
  const T &operator*() const { return *value; }
  T *operator->() { return &*value; }
  const T *operator->() const { return &*value; }
  T take() { return std::move(*value); }

private:
  std::optional<T> value;
  Status status;
};

} // namespace cudal1

#endif
