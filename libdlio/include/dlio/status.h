// Error model of libdlio: every fallible call returns a Status or a Result<T>.
// The library never throws across its API, never exits and never aborts, except on a caller's
// bug that no status can report: Result::value() of an error (see Result).
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "dlio/str_cat.h"

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
  // Each factory takes the message as pieces joined by StrCat (strings, numbers, bools, chars):
  // Status::Corruption(path, ": record at offset ", offset, " is truncated").
  template <typename... Parts>
  static Status InvalidArgument(const Parts&... parts) {
    return {StatusCode::kInvalidArgument, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status NotFound(const Parts&... parts) {
    return {StatusCode::kNotFound, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status AlreadyExists(const Parts&... parts) {
    return {StatusCode::kAlreadyExists, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status IOError(const Parts&... parts) {
    return {StatusCode::kIOError, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status Corruption(const Parts&... parts) {
    return {StatusCode::kCorruption, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status OutOfRange(const Parts&... parts) {
    return {StatusCode::kOutOfRange, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status Unimplemented(const Parts&... parts) {
    return {StatusCode::kUnimplemented, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status FailedPrecondition(const Parts&... parts) {
    return {StatusCode::kFailedPrecondition, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status Cancelled(const Parts&... parts) {
    return {StatusCode::kCancelled, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status ResourceExhausted(const Parts&... parts) {
    return {StatusCode::kResourceExhausted, StrCat(parts...)};
  }
  template <typename... Parts>
  static Status Internal(const Parts&... parts) {
    return {StatusCode::kInternal, StrCat(parts...)};
  }

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

namespace internal {
// Prints "dlio: value() of a Result holding an error: <status>" to stderr and aborts.
[[noreturn]] void DieOnErrorResult(const Status& status);
}  // namespace internal

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

  // The value. Calling it on an error is a bug in the caller: the process aborts, printing the
  // status (as Arrow's ValueOrDie does), rather than throwing std::bad_variant_access.
  T& value() & {
    CheckOk();
    return std::get<T>(v_);
  }
  const T& value() const& {
    CheckOk();
    return std::get<T>(v_);
  }
  T&& value() && {
    CheckOk();
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T ValueOr(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  void CheckOk() const {
    if (!ok()) internal::DieOnErrorResult(std::get<Status>(v_));
  }

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
