// Error model of libdlio: every fallible call returns a Status or a Result<T>.
// The library never throws across its API, never exits and never aborts.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace dlio {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad config value, bad call argument
  kNotFound,            // file, key or registry name that does not exist
  kAlreadyExists,       // refusing to overwrite something we did not create
  kIOError,             // the OS said no (errno is in the message)
  kCorruption,          // a file's bytes do not parse (message names file and offset)
  kOutOfRange,          // index past the end (sample, file, offset)
  kUnimplemented,       // known name whose backend was not compiled in
  kFailedPrecondition,  // call made in the wrong state
  kCancelled,           // shut down while waiting
  kResourceExhausted,   // disk full, out of memory
  kInternal,            // a bug in dlio
};

std::string_view StatusCodeName(StatusCode code);

// A success or an error code with a human-readable message.
// Cheap to copy when ok (no allocation). Safe to share between threads once built.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  // IOError (or ResourceExhausted for ENOSPC/ENOMEM) with "<what>: <strerror(err)>".
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "IOError: open data/x.npz: No such file or directory"
  std::string ToString() const;

  // Same code, message prefixed by "<context>: ". No-op when ok.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or an error. Constructing a Result from an ok Status is a bug (asserts, and becomes
// an Internal error in release builds).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok());
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T ValueOr(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace dlio

#define DLIO_CONCAT_INNER_(a, b) a##b
#define DLIO_CONCAT_(a, b) DLIO_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function if it is not ok.
#define DLIO_RETURN_NOT_OK(expr)                 \
  do {                                           \
    ::dlio::Status dlio_status_ = (expr);        \
    if (!dlio_status_.ok()) return dlio_status_; \
  } while (false)

#define DLIO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

// `DLIO_ASSIGN_OR_RETURN(auto x, F());` declares x from an ok Result or returns its error.
#define DLIO_ASSIGN_OR_RETURN(lhs, rexpr) \
  DLIO_ASSIGN_OR_RETURN_IMPL_(DLIO_CONCAT_(dlio_result_, __LINE__), lhs, rexpr)
