/* A C host of the installed gpupool: compiled as C99, linked through find_package(gpupool)
 * (gpupool::c) or through pkg-config (gpupool.pc). run_consumer.cmake compares its output with
 * the installed `gpupool` command's, byte for byte.
 *
 *   c_consumer schedule SNAPSHOT [POLICY]    the decisions, as `gpupool schedule`
 *   c_consumer validate SNAPSHOT             the summary `gpupool validate` prints after "FILE: "
 *   c_consumer explain SNAPSHOT JOB [POLICY] as `gpupool explain`
 *   c_consumer apply SNAPSHOT DECISIONS      the next snapshot, as `gpupool apply`
 *   c_consumer errors SNAPSHOT VERSION       checks the error paths; prints one line per check
 *
 * On an invalid input it prints gpupool's message on stderr and exits 1, like the CLI. Files are
 * read whole into buffers that are not NUL-terminated: the lengths are what counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/c_api.h"

/* The whole file in a malloc()ed buffer (not NUL-terminated), its size in *size. */
static char* ReadFile(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  char* data = NULL;
  size_t capacity = 0;
  *size = 0;
  if (file == NULL) {
    fprintf(stderr, "c_consumer: %s: cannot read file\n", path);
    exit(2);
  }
  for (;;) {
    size_t got;
    if (*size == capacity) {
      capacity = capacity == 0 ? 4096 : capacity * 2;
      data = (char*)realloc(data, capacity);
      if (data == NULL) exit(3);
    }
    got = fread(data + *size, 1, capacity - *size, file);
    *size += got;
    if (got == 0) break;
  }
  fclose(file);
  return data;
}

/* Prints the result or the error of a call, frees both, returns the exit code. */
static int Finish(int code, char* result, char* error) {
  if (code == GPUPOOL_OK) {
    fwrite(result, 1, strlen(result), stdout);
  } else {
    fprintf(stderr, "%s\n", error != NULL ? error : "(no message)");
  }
  gpupool_free(result);
  gpupool_free(error);
  return code;
}

static int failures = 0;

static void Check(int ok, const char* what) {
  printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

static int Contains(const char* text, const char* part) {
  return text != NULL && strstr(text, part) != NULL;
}

/* Every error path of the API on one valid snapshot. */
static int CheckErrors(const char* snapshot, size_t snapshot_len, const char* version) {
  char* out = (char*)1;
  char* error = (char*)1;
  int code;
  static const char kWithNul[] = "{\"nodes\": []}\0{\"jobs\": 1}";
  static const char kScorerPolicy[] = "{\"scorer\": \"mine\"}";

  Check(strcmp(gpupool_version(), version) == 0, "gpupool_version() is the package's version");

  code = gpupool_schedule_json(snapshot, snapshot_len, NULL, 0, &out, &error);
  Check(code == GPUPOOL_OK && out != NULL && error == NULL, "valid snapshot: OK, no message");
  Check(out != NULL && out[strlen(out) - 1] == '\n', "decisions end in a newline");
  gpupool_free(out);
  gpupool_free(error);

  code = gpupool_schedule_json("{\"nodes\": [", 11, NULL, 0, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL && Contains(error, "snapshot: ") &&
            Contains(error, "invalid JSON"),
        "truncated JSON: INVALID_INPUT, \"snapshot: ...invalid JSON...\"");
  gpupool_free(error);

  code = gpupool_schedule_json("{\"nodes\": 1}", 12, NULL, 0, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL &&
            Contains(error, "snapshot: nodes: expected an array"),
        "wrong shape: the reader's message with the JSON path");
  gpupool_free(error);

  {
    static const char kUnknownQueue[] =
        "{\"queues\": [{\"id\": \"a\"}], \"jobs\": [{\"id\": \"j1\", \"queue\": \"b\", "
        "\"groups\": [{\"name\": \"main\", \"replicas\": 1, \"request\": {\"gpu_milli\": 1000}}]}]}";
    code = gpupool_schedule_json(kUnknownQueue, sizeof kUnknownQueue - 1, NULL, 0, &out, &error);
    Check(code == GPUPOOL_INVALID_INPUT && out == NULL &&
              Contains(error, "snapshot: jobs[j1].queue: unknown queue \"b\""),
          "inconsistent snapshot: validation's message naming the field and the id");
    gpupool_free(error);
  }

  code = gpupool_schedule_json(kWithNul, sizeof kWithNul - 1, NULL, 0, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL && Contains(error, "snapshot: "),
        "a NUL byte inside the length is text: invalid JSON");
  gpupool_free(error);
  code = gpupool_schedule_json(kWithNul, strlen(kWithNul), NULL, 0, &out, &error);
  Check(code == GPUPOOL_OK && Contains(out, "\"starts\": []"),
        "the same buffer with the length up to the NUL: OK");
  gpupool_free(out);
  gpupool_free(error);

  if (sizeof(size_t) > 4) {
    code = gpupool_schedule_json(snapshot, (size_t)-1, NULL, 0, &out, &error);
    Check(code == GPUPOOL_INVALID_INPUT && out == NULL &&
              Contains(error, "snapshot: ") && Contains(error, "bytes is more than"),
          "a length past GPUPOOL_MAX_JSON_BYTES: INVALID_INPUT, text not read");
    gpupool_free(error);
    code = gpupool_schedule_json(snapshot, snapshot_len, "{}", (size_t)-1, &out, &error);
    Check(code == GPUPOOL_INVALID_INPUT && Contains(error, "policy: "),
          "a policy length past the limit: INVALID_INPUT naming the policy");
    gpupool_free(error);
  }

  code = gpupool_schedule_json(snapshot, snapshot_len, kScorerPolicy, sizeof kScorerPolicy - 1,
                               &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL && Contains(error, "policy: scorer: "),
        "invalid policy: INVALID_INPUT, \"policy: scorer: ...\"");
  gpupool_free(error);

  {
    static const char kBadThresholds[] = "{\"las_thresholds_gpu_seconds\": [7200, 3250]}";
    code = gpupool_schedule_json(snapshot, snapshot_len, kBadThresholds,
                                 sizeof kBadThresholds - 1, &out, &error);
    Check(code == GPUPOOL_INVALID_INPUT && out == NULL &&
              Contains(error, "policy: policy.las_thresholds_gpu_seconds[1]: "),
          "a policy refused by validation: named \"policy\", with the field");
    gpupool_free(error);
  }

  code = gpupool_schedule_json(snapshot, snapshot_len, "", 0, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && Contains(error, "policy: invalid JSON"),
        "an empty (non-NULL) policy is invalid JSON, as an empty file is");
  gpupool_free(error);

  code = gpupool_schedule_json(snapshot, snapshot_len, NULL, 0, NULL, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "decisions_json is NULL"),
        "NULL decisions_json: USAGE_ERROR");
  gpupool_free(error);

  out = (char*)1;
  code = gpupool_schedule_json(NULL, 10, NULL, 0, &out, &error);
  Check(code == GPUPOOL_USAGE_ERROR && out == NULL && Contains(error, "snapshot_json is NULL"),
        "NULL snapshot_json: USAGE_ERROR, output set to NULL");
  gpupool_free(error);

  code = gpupool_schedule_json(snapshot, snapshot_len, NULL, 3, &out, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "policy_len is 3"),
        "NULL policy_json with a length: USAGE_ERROR");
  gpupool_free(error);

  code = gpupool_schedule_json("[", 1, NULL, 0, &out, NULL);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL, "no error_message wanted: code only");

  code = gpupool_validate_json(snapshot, snapshot_len, &out, &error);
  Check(code == GPUPOOL_OK && strncmp(out, "ok: ", 4) == 0 && error == NULL, "validate: ok");
  gpupool_free(out);
  code = gpupool_validate_json("{\"nodes\": [{}]}", 15, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL && Contains(error, "snapshot: nodes[0]"),
        "validate: an invalid node");
  gpupool_free(error);
  code = gpupool_validate_json(snapshot, snapshot_len, NULL, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "summary is NULL"),
        "validate: NULL summary");
  gpupool_free(error);

  code = gpupool_explain_json(snapshot, snapshot_len, NULL, 0, "no-such-job", 11, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL &&
            Contains(error, "snapshot: no job \"no-such-job\""),
        "explain: an unknown job");
  gpupool_free(error);
  code = gpupool_explain_json(snapshot, snapshot_len, NULL, 0, NULL, 0, &out, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "job_id is NULL"), "explain: NULL job_id");
  gpupool_free(error);
  code = gpupool_explain_json(snapshot, snapshot_len, NULL, 0, "x", 1, NULL, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "explanation is NULL"),
        "explain: NULL explanation");
  gpupool_free(error);

  code = gpupool_schedule_json(snapshot, snapshot_len, NULL, 0, &out, &error);
  if (code == GPUPOOL_OK) {
    char* next = NULL;
    code = gpupool_apply_json(snapshot, snapshot_len, out, strlen(out), &next, &error);
    Check(code == GPUPOOL_OK && Contains(next, "\"jobs\": [") && error == NULL,
          "apply: the decisions carried out, a snapshot back");
    gpupool_free(next);
  }
  gpupool_free(out);
  code = gpupool_apply_json(snapshot, snapshot_len, "{", 1, &out, &error);
  Check(code == GPUPOOL_INVALID_INPUT && out == NULL && Contains(error, "decisions: "),
        "apply: decisions that are not JSON");
  gpupool_free(error);
  code = gpupool_apply_json(snapshot, snapshot_len, NULL, 0, &out, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "decisions_json is NULL"),
        "apply: NULL decisions_json");
  gpupool_free(error);
  code = gpupool_apply_json(snapshot, snapshot_len, "{}", 2, NULL, &error);
  Check(code == GPUPOOL_USAGE_ERROR && Contains(error, "next_snapshot_json is NULL"),
        "apply: NULL next_snapshot_json");
  gpupool_free(error);

  gpupool_free(NULL);
  Check(1, "gpupool_free(NULL) returns");
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  char* snapshot;
  char* policy = NULL;
  size_t snapshot_len;
  size_t policy_len = 0;
  char* result = NULL;
  char* error = NULL;
  int code;
  if (argc < 3) {
    fprintf(stderr, "usage: c_consumer schedule|validate|explain|apply|errors SNAPSHOT ...\n");
    return 2;
  }
  snapshot = ReadFile(argv[2], &snapshot_len);
  if (strcmp(argv[1], "schedule") == 0 && (argc == 3 || argc == 4)) {
    if (argc == 4) policy = ReadFile(argv[3], &policy_len);
    code = gpupool_schedule_json(snapshot, snapshot_len, policy, policy_len, &result, &error);
    code = Finish(code, result, error);
  } else if (strcmp(argv[1], "validate") == 0 && argc == 3) {
    code = gpupool_validate_json(snapshot, snapshot_len, &result, &error);
    code = Finish(code, result, error);
  } else if (strcmp(argv[1], "explain") == 0 && (argc == 4 || argc == 5)) {
    if (argc == 5) policy = ReadFile(argv[4], &policy_len);
    code = gpupool_explain_json(snapshot, snapshot_len, policy, policy_len, argv[3],
                                strlen(argv[3]), &result, &error);
    code = Finish(code, result, error);
  } else if (strcmp(argv[1], "apply") == 0 && argc == 4) {
    size_t decisions_len = 0;
    char* decisions = ReadFile(argv[3], &decisions_len);
    code = gpupool_apply_json(snapshot, snapshot_len, decisions, decisions_len, &result, &error);
    code = Finish(code, result, error);
    free(decisions);
  } else if (strcmp(argv[1], "errors") == 0 && argc == 4) {
    code = CheckErrors(snapshot, snapshot_len, argv[3]);
  } else {
    fprintf(stderr, "c_consumer: bad arguments\n");
    code = 2;
  }
  free(snapshot);
  free(policy);
  return code;
}
