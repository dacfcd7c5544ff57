// The small text formats of Slurm the adapter reads and writes: hostlists ("n[1-3,5]"), GRES
// strings ("gpu:h100:8", "gpu:h100:2(IDX:0-1)", "gres:gpu:4"), and the job comment, which holds
// the user's directives to gpupool and the adapter's own status text.
#ifndef GPUPOOL_SRC_HOSTS_SLURM_SLURM_TEXT_H_
#define GPUPOOL_SRC_HOSTS_SLURM_SLURM_TEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpupool::slurm {

// "n[1-3,5],gpu[01-02]x" -> n1 n2 n3 n5 gpu01x gpu02x (zero padding kept; several bracket
// groups in one name multiply out). Empty text -> no names. InvalidArgument when malformed.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view hostlist);

// Splits at the commas that are outside parentheses and brackets; empty pieces are dropped.
std::vector<std::string> SplitTopLevel(std::string_view text);

// "0-2,5" -> 0 1 2 5; "N/A" or empty -> nothing. InvalidArgument when malformed or above 1023.
absl::StatusOr<std::vector<int32_t>> ParseIndexList(std::string_view text);

// One GRES entry: name, optional type, count, and (when the text carries "IDX:...") the indices.
struct Gres {
  std::string name;
  std::string type;
  int64_t count = 0;
  bool has_indices = false;
  std::vector<int32_t> indices;
};

// Parses a comma-separated GRES list in any of Slurm's spellings: node GRES ("gpu:h100:8",
// "gpu:8(S:0-1)"), GRES in use and job GRES detail ("gpu:h100:3(IDX:0-2)"), and job TRES requests
// ("gres:gpu:h100:2", "gres/gpu:2"). A missing count is 1. InvalidArgument when malformed.
absl::StatusOr<std::vector<Gres>> ParseGresList(std::string_view text);

// The job comment is shared between the user and the adapter: the user's text comes first, then
// the marker "gpupool:" and the adapter's status (why the job waits, where it was started, why it
// was preempted). The adapter rewrites only what follows the marker.
inline constexpr char kCommentMarker[] = "gpupool:";
struct CommentParts {
  std::string user;     // before the marker, trimmed
  std::string adapter;  // after the marker, trimmed
};
CommentParts SplitComment(std::string_view comment);
// The user's text, then "gpupool: <status>", cut to kMaxCommentBytes.
std::string JoinComment(std::string_view user, std::string_view status);
inline constexpr size_t kMaxCommentBytes = 500;

// Directives a user puts in the job's comment (sbatch --comment), space-separated among any
// other text:
//   checkpoint=SIG@SECONDS     before a preemption, send SIG to the job (batch shell and steps)
//                              and give it SECONDS to write a checkpoint
//   checkpoint_interval=SECONDS  the job checkpoints every SECONDS by itself
// Other words are ignored. InvalidArgument for a malformed directive.
struct Directives {
  std::string checkpoint_signal;  // empty: none
  int64_t checkpoint_wait_s = 0;
  int64_t checkpoint_interval_s = 0;
};
absl::StatusOr<Directives> ParseDirectives(std::string_view user_comment);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_SLURM_TEXT_H_
