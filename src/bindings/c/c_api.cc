// The C API (include/gpupool/c_api.h) over bindings/json_api.h.
//
// Every entry point checks its pointers first, then runs the C++ call inside one try block:
// whatever happens inside (an error status, std::bad_alloc, a bug's exception) becomes a return
// code and a message, so nothing but an int crosses into C. Strings go out through malloc(),
// which gpupool_free() releases.
#include "gpupool/c_api.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bindings/json_api.h"
#include "fmt/format.h"
#include "gpupool/version.h"

namespace {

// A malloc()ed, NUL-terminated copy of `text`, or nullptr when memory runs out.
char* CopyOut(std::string_view text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) return nullptr;
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

// Stores `message` in *error_message (when wanted) and returns `code`.
int Fail(int code, std::string_view message, char** error_message) {
  if (error_message != nullptr) *error_message = CopyOut(message);
  return code;
}

// The input errors of the library; anything else (Internal, Unknown...) is a bug of ours.
bool IsInputError(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
      return true;
    default:
      return false;
  }
}

// Sets both outputs to NULL first, as the header promises for every return.
void ClearOutputs(char** result, char** error_message) {
  if (result != nullptr) *result = nullptr;
  if (error_message != nullptr) *error_message = nullptr;
}

// The checks every function shares: a required document and an optional policy.
std::optional<int> CheckDocuments(const char* snapshot_json, size_t snapshot_len,
                                  const char* policy_json, size_t policy_len,
                                  char** error_message) {
  if (snapshot_json == nullptr) {
    return Fail(GPUPOOL_USAGE_ERROR, "snapshot_json is NULL", error_message);
  }
  if (policy_json == nullptr && policy_len != 0) {
    return Fail(GPUPOOL_USAGE_ERROR,
                fmt::format("policy_json is NULL but policy_len is {}", policy_len), error_message);
  }
  // Before any view of the text is made: a length past the limit is refused unread.
  for (const auto& [name, size] : {std::pair<const char*, size_t>{"snapshot", snapshot_len},
                                   std::pair<const char*, size_t>{"policy", policy_len}}) {
    if (absl::Status status = gpupool::bindings::CheckDocumentSize(name, size); !status.ok()) {
      return Fail(GPUPOOL_INVALID_INPUT, std::string(status.message()), error_message);
    }
  }
  return std::nullopt;
}

std::optional<std::string_view> PolicyText(const char* policy_json, size_t policy_len) {
  if (policy_json == nullptr) return std::nullopt;
  return std::string_view(policy_json, policy_len);
}

// Runs `call` (returning absl::StatusOr<std::string>) and hands its result to the caller.
template <typename Call>
int Run(char** result, char** error_message, Call&& call) noexcept {
  try {
    absl::StatusOr<std::string> text = call();
    if (!text.ok()) {
      const int code =
          IsInputError(text.status().code()) ? GPUPOOL_INVALID_INPUT : GPUPOOL_INTERNAL_ERROR;
      return Fail(code,
                  code == GPUPOOL_INVALID_INPUT
                      ? std::string(text.status().message())
                      : fmt::format("internal error: {}", text.status().ToString()),
                  error_message);
    }
    *result = CopyOut(*text);
    if (*result == nullptr) return Fail(GPUPOOL_INTERNAL_ERROR, "out of memory", error_message);
    return GPUPOOL_OK;
  } catch (const std::bad_alloc&) {
    return Fail(GPUPOOL_INTERNAL_ERROR, "out of memory", error_message);
  } catch (const std::exception& e) {
    // Formatting the message may itself run out of memory: Fail() is not inside this try.
    try {
      return Fail(GPUPOOL_INTERNAL_ERROR, fmt::format("internal error: {}", e.what()),
                  error_message);
    } catch (...) {
      return GPUPOOL_INTERNAL_ERROR;
    }
  } catch (...) {
    return Fail(GPUPOOL_INTERNAL_ERROR, "internal error: unknown exception", error_message);
  }
}

// Wraps a whole entry point's checks the same way (fmt::format in them may throw bad_alloc).
template <typename Body>
int Guard(char** error_message, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    if (error_message != nullptr && *error_message == nullptr) {
      *error_message = CopyOut("out of memory");
    }
    return GPUPOOL_INTERNAL_ERROR;
  }
}

}  // namespace

extern "C" {

const char* gpupool_version(void) { return gpupool::kVersion; }

int gpupool_schedule_json(const char* snapshot_json, size_t snapshot_len, const char* policy_json,
                          size_t policy_len, char** decisions_json, char** error_message) {
  ClearOutputs(decisions_json, error_message);
  return Guard(error_message, [&]() -> int {
    if (decisions_json == nullptr) {
      return Fail(GPUPOOL_USAGE_ERROR, "decisions_json is NULL", error_message);
    }
    if (std::optional<int> bad =
            CheckDocuments(snapshot_json, snapshot_len, policy_json, policy_len, error_message)) {
      return *bad;
    }
    return Run(decisions_json, error_message, [&] {
      return gpupool::bindings::ScheduleJson(std::string_view(snapshot_json, snapshot_len),
                                             PolicyText(policy_json, policy_len));
    });
  });
}

int gpupool_validate_json(const char* snapshot_json, size_t snapshot_len, char** summary,
                          char** error_message) {
  ClearOutputs(summary, error_message);
  return Guard(error_message, [&]() -> int {
    if (summary == nullptr) return Fail(GPUPOOL_USAGE_ERROR, "summary is NULL", error_message);
    if (std::optional<int> bad =
            CheckDocuments(snapshot_json, snapshot_len, nullptr, 0, error_message)) {
      return *bad;
    }
    return Run(summary, error_message, [&] {
      return gpupool::bindings::ValidateJson(std::string_view(snapshot_json, snapshot_len));
    });
  });
}

int gpupool_explain_json(const char* snapshot_json, size_t snapshot_len, const char* policy_json,
                         size_t policy_len, const char* job_id, size_t job_id_len,
                         char** explanation, char** error_message) {
  ClearOutputs(explanation, error_message);
  return Guard(error_message, [&]() -> int {
    if (explanation == nullptr) {
      return Fail(GPUPOOL_USAGE_ERROR, "explanation is NULL", error_message);
    }
    if (job_id == nullptr) return Fail(GPUPOOL_USAGE_ERROR, "job_id is NULL", error_message);
    if (absl::Status size = gpupool::bindings::CheckDocumentSize("job_id", job_id_len);
        !size.ok()) {
      return Fail(GPUPOOL_INVALID_INPUT, std::string(size.message()), error_message);
    }
    if (std::optional<int> bad =
            CheckDocuments(snapshot_json, snapshot_len, policy_json, policy_len, error_message)) {
      return *bad;
    }
    return Run(explanation, error_message, [&] {
      return gpupool::bindings::ExplainJson(std::string_view(snapshot_json, snapshot_len),
                                            PolicyText(policy_json, policy_len),
                                            std::string_view(job_id, job_id_len));
    });
  });
}

int gpupool_apply_json(const char* snapshot_json, size_t snapshot_len, const char* decisions_json,
                       size_t decisions_len, char** next_snapshot_json, char** error_message) {
  ClearOutputs(next_snapshot_json, error_message);
  return Guard(error_message, [&]() -> int {
    if (next_snapshot_json == nullptr) {
      return Fail(GPUPOOL_USAGE_ERROR, "next_snapshot_json is NULL", error_message);
    }
    if (decisions_json == nullptr) {
      return Fail(GPUPOOL_USAGE_ERROR, "decisions_json is NULL", error_message);
    }
    if (absl::Status size = gpupool::bindings::CheckDocumentSize("decisions", decisions_len);
        !size.ok()) {
      return Fail(GPUPOOL_INVALID_INPUT, std::string(size.message()), error_message);
    }
    if (std::optional<int> bad =
            CheckDocuments(snapshot_json, snapshot_len, nullptr, 0, error_message)) {
      return *bad;
    }
    return Run(next_snapshot_json, error_message, [&] {
      return gpupool::bindings::ApplyJson(std::string_view(snapshot_json, snapshot_len),
                                          std::string_view(decisions_json, decisions_len));
    });
  });
}

void gpupool_free(char* text) { std::free(text); }

}  // extern "C"
