/* The C API of gpupool: JSON in, JSON out (target gpupool::c, library libgpupool_c).
 *
 * For hosts written in C, Go (cgo), Rust, Zig, or any language with a C FFI. Each function takes
 * documents in the formats of docs/snapshot-format.md and docs/policy-format.md and returns the
 * same bytes as the matching `gpupool` command (docs/cli.md): gpupool_schedule_json() returns
 * exactly what `gpupool schedule FILE [--policy POLICY]` writes to stdout for the same files,
 * byte for byte, trailing newline included. docs/embedding.md shows how to build and link.
 *
 * Plain C: this header compiles as C89, C99 and later, and as C++ (with C linkage).
 *
 * Return codes (every function that can fail returns one of these):
 *
 *   GPUPOOL_OK (0)             success; the outputs hold the result.
 *   GPUPOOL_INVALID_INPUT (1)  an input document is invalid: not JSON, not the shape of a
 *                              snapshot or policy, refused by validation, larger than
 *                              GPUPOOL_MAX_JSON_BYTES, or (explain) an unknown job id. The error
 *                              message is the one `gpupool` prints on stderr after
 *                              "gpupool: FILE: ", with "snapshot: " or "policy: " in place of the
 *                              file name, e.g.
 *                                snapshot: jobs[j1].queue: unknown queue "no-such-queue"
 *                                policy: scorer: a placement scorer is host code ...
 *                              (a policy refused by ValidatePolicy() is named "policy", as the
 *                              CLI names the policy's file:
 *                                policy: policy.starvation_bound_s: ...)
 *   GPUPOOL_USAGE_ERROR (2)    the call itself is wrong: a NULL pointer where one is required,
 *                              or a NULL policy_json with a nonzero policy_len. Nothing is read.
 *   GPUPOOL_INTERNAL_ERROR (3) memory ran out, or a bug in gpupool. The message says which (when
 *                              there was memory for one).
 *
 * Outputs and ownership. Output strings are allocated by gpupool, NUL-terminated, valid UTF-8,
 * owned by the caller from then on, and must be released with gpupool_free() (not free(): the
 * allocator is gpupool's to choose). Every function sets each non-NULL output pointer it is given
 * on every return: the result and NULL on success; NULL and the message on failure. So a caller
 * may always pass both to gpupool_free() afterwards. `error_message` may be NULL when the caller
 * does not want the message.
 *
 * Inputs are (pointer, length) pairs: the length counts bytes, the text need not be
 * NUL-terminated, and a NUL byte inside the length is part of the text (and so invalid JSON).
 * gpupool reads the inputs only during the call and keeps no reference to them.
 *
 * Errors never escape as anything but a return code: no C++ exception, abort() or exit() crosses
 * this API, whatever the input bytes. (Passing a length longer than the buffer it describes is
 * the caller's bug, as with memcpy.)
 *
 * Thread safety: every function may be called from any number of threads at once; they share
 * no mutable state. Determinism: the same inputs give the same output bytes on every machine and
 * every run.
 *
 * Stability: the functions, codes and macros of this header are stable within a major version;
 * new functions may be added. The JSON formats evolve as documented in docs/.
 */
#ifndef GPUPOOL_C_API_H_
#define GPUPOOL_C_API_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes (see the top of this file). */
#define GPUPOOL_OK 0
#define GPUPOOL_INVALID_INPUT 1
#define GPUPOOL_USAGE_ERROR 2
#define GPUPOOL_INTERNAL_ERROR 3

/* The largest document accepted, in bytes (4 GiB - 1, the JSON parser's limit). A longer length
 * gives GPUPOOL_INVALID_INPUT without reading the text. */
#define GPUPOOL_MAX_JSON_BYTES 4294967295u

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project version, e.g. "0.1.0"). The
 * string is static: do not free it. Never fails; thread-safe. */
const char* gpupool_version(void);

/* One scheduling cycle: parses the snapshot, validates it, parses the policy, runs Schedule()
 * and writes the decisions as canonical JSON (docs/decisions-format.md).
 *
 *   snapshot_json, snapshot_len  the snapshot document (required, non-NULL even when empty).
 *   policy_json, policy_len      the policy document; NULL (with policy_len 0) means the
 *                                built-in default policy, as `gpupool schedule` without
 *                                --policy. A non-NULL empty text is invalid JSON, as an empty
 *                                policy file is.
 *   decisions_json               required; receives the decisions: the bytes
 *                                `gpupool schedule` prints, ending in a newline.
 *   error_message                optional; receives the reason on failure.
 *
 * Returns GPUPOOL_OK, GPUPOOL_INVALID_INPUT (an input is invalid; checked in the CLI's order:
 * the snapshot's shape, its validation, the policy's shape, then the policy's validation),
 * GPUPOOL_USAGE_ERROR (NULL snapshot_json or decisions_json; NULL policy_json with
 * policy_len > 0) or GPUPOOL_INTERNAL_ERROR. Cost: that of Schedule() (about linear in the
 * pending jobs) plus parsing at well over 100 MB/s. */
int gpupool_schedule_json(const char* snapshot_json, size_t snapshot_len, const char* policy_json,
                          size_t policy_len, char** decisions_json, char** error_message);

/* Checks a snapshot as `gpupool validate FILE` does: its shape, then ValidateSnapshot().
 *
 *   summary  required; receives what `gpupool validate FILE` prints after "FILE: ", e.g.
 *            "ok: 2 nodes (16 GPUs), 1 GPU model, 4 queues, 6 jobs (5 pending, 1 running)\n".
 *
 * Returns GPUPOOL_OK, GPUPOOL_INVALID_INPUT (the message as for gpupool_schedule_json()),
 * GPUPOOL_USAGE_ERROR (NULL snapshot_json or summary) or GPUPOOL_INTERNAL_ERROR. */
int gpupool_validate_json(const char* snapshot_json, size_t snapshot_len, char** summary,
                          char** error_message);

/* Schedules the snapshot like gpupool_schedule_json() and explains one job, as
 * `gpupool explain FILE JOB_ID [--policy POLICY]` does: where it runs, where it starts and on
 * which GPUs, or why it waits, in English, several lines each ending in a newline.
 *
 *   job_id, job_id_len  the job's id (bytes, as in the snapshot; required, non-NULL).
 *   explanation         required; receives the text `gpupool explain` prints.
 *
 * Returns GPUPOOL_OK, GPUPOOL_INVALID_INPUT (an invalid input as for gpupool_schedule_json(),
 * or no job with that id: "snapshot: no job \"ID\"..."), GPUPOOL_USAGE_ERROR (NULL snapshot_json,
 * job_id or explanation; NULL policy_json with policy_len > 0) or GPUPOOL_INTERNAL_ERROR. */
int gpupool_explain_json(const char* snapshot_json, size_t snapshot_len, const char* policy_json,
                         size_t policy_len, const char* job_id, size_t job_id_len,
                         char** explanation, char** error_message);

/* Carries a cycle's decisions out on a snapshot, as `gpupool apply SNAPSHOT DECISIONS` does
 * (ApplyDecisions(): node actions, preemptions, resizes, migrations, starts;
 * docs/decisions-format.md, "Applying the decisions"), and writes the resulting snapshot as
 * canonical JSON.
 *
 *   snapshot_json, snapshot_len    the snapshot document (required, non-NULL).
 *   decisions_json, decisions_len  the decisions, as gpupool_schedule_json() returns them for
 *                                  that snapshot (required, non-NULL).
 *   next_snapshot_json             required; receives the bytes `gpupool apply` prints.
 *
 * Returns GPUPOOL_OK, GPUPOOL_INVALID_INPUT (an invalid snapshot, as for
 * gpupool_schedule_json(); decisions that cannot be parsed, or that do not fit the snapshot:
 * "decisions: ..."), GPUPOOL_USAGE_ERROR (a NULL required pointer) or GPUPOOL_INTERNAL_ERROR. */
int gpupool_apply_json(const char* snapshot_json, size_t snapshot_len, const char* decisions_json,
                       size_t decisions_len, char** next_snapshot_json, char** error_message);

/* Releases a string returned by any function of this header. Safe on NULL (does nothing).
 * Each string must be released exactly once. */
void gpupool_free(char* text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUPOOL_C_API_H_ */
