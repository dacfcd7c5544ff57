#include "hosts/slurm/slurm_text.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace gpupool::slurm {
namespace {

absl::string_view Abs(std::string_view text) { return absl::string_view(text.data(), text.size()); }

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A non-negative decimal below 10^12.
bool ParseCount(std::string_view text, int64_t* value) {
  if (!AllDigits(text) || text.size() > 12) return false;
  return absl::SimpleAtoi(Abs(text), value);
}

// Expands one name that may hold bracket groups.
absl::Status ExpandName(std::string_view name, std::vector<std::string>* out) {
  const size_t open = name.find('[');
  if (open == std::string_view::npos) {
    if (name.find(']') != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("unbalanced ']' in \"", Abs(name), "\""));
    }
    out->emplace_back(name);
    return absl::OkStatus();
  }
  const size_t close = name.find(']', open);
  if (close == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("unbalanced '[' in \"", Abs(name), "\""));
  }
  const std::string_view prefix = name.substr(0, open);
  const std::string_view ranges = name.substr(open + 1, close - open - 1);
  const std::string_view rest = name.substr(close + 1);
  std::vector<std::string> tails;
  if (absl::Status status = ExpandName(rest, &tails); !status.ok()) return status;
  for (absl::string_view range : absl::StrSplit(Abs(ranges), ',')) {
    std::string_view lo_text(range.data(), range.size());
    std::string_view hi_text = lo_text;
    if (const size_t dash = lo_text.find('-'); dash != std::string_view::npos) {
      hi_text = lo_text.substr(dash + 1);
      lo_text = lo_text.substr(0, dash);
    }
    int64_t lo = 0;
    int64_t hi = 0;
    if (!ParseCount(lo_text, &lo) || !ParseCount(hi_text, &hi) || hi < lo || hi - lo > 100000) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad range \"", range, "\" in \"", Abs(name), "\""));
    }
    const size_t width = lo_text.size();
    for (int64_t i = lo; i <= hi; ++i) {
      std::string number = absl::StrCat(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      for (const std::string& tail : tails) {
        out->push_back(absl::StrCat(Abs(prefix), number, tail));
      }
    }
  }
  return absl::OkStatus();
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && absl::ascii_isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::vector<std::string> SplitTopLevel(std::string_view text) {
  std::vector<std::string> pieces;
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (!current.empty()) pieces.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) pieces.push_back(current);
  return pieces;
}

absl::StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view hostlist) {
  std::vector<std::string> names;
  for (const std::string& piece : SplitTopLevel(Trim(hostlist))) {
    if (absl::Status status = ExpandName(Trim(piece), &names); !status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("hostlist \"", Abs(hostlist), "\": ", status.message()));
    }
  }
  return names;
}

absl::StatusOr<std::vector<int32_t>> ParseIndexList(std::string_view text) {
  std::vector<int32_t> indices;
  text = Trim(text);
  if (text.empty() || text == "N/A") return indices;
  for (absl::string_view range : absl::StrSplit(Abs(text), ',')) {
    std::string_view lo_text(range.data(), range.size());
    std::string_view hi_text = lo_text;
    if (const size_t dash = lo_text.find('-'); dash != std::string_view::npos) {
      hi_text = lo_text.substr(dash + 1);
      lo_text = lo_text.substr(0, dash);
    }
    int64_t lo = 0;
    int64_t hi = 0;
    if (!ParseCount(lo_text, &lo) || !ParseCount(hi_text, &hi) || hi < lo || hi > 1023) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad GPU index range \"", range, "\" in \"", Abs(text), "\""));
    }
    for (int64_t i = lo; i <= hi; ++i) indices.push_back(static_cast<int32_t>(i));
  }
  return indices;
}

absl::StatusOr<std::vector<Gres>> ParseGresList(std::string_view text) {
  std::vector<Gres> list;
  for (const std::string& piece : SplitTopLevel(Trim(text))) {
    std::string_view entry = Trim(piece);
    const std::string_view whole = entry;
    auto error = [&](std::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("GRES \"", Abs(whole), "\": ", Abs(why)));
    };
    if (entry.substr(0, 5) == "gres:" || entry.substr(0, 5) == "gres/") entry.remove_prefix(5);
    Gres gres;
    if (const size_t paren = entry.find('('); paren != std::string_view::npos) {
      if (entry.back() != ')') return error("unbalanced '('");
      const std::string_view inside = entry.substr(paren + 1, entry.size() - paren - 2);
      entry = entry.substr(0, paren);
      if (const size_t idx = inside.find("IDX:"); idx != std::string_view::npos) {
        std::string_view list_text = inside.substr(idx + 4);
        // The index list ends where another "X:" field begins (",S:0-1"), if any.
        size_t end = 0;
        while (end < list_text.size() &&
               (AllDigits(list_text.substr(end, 1)) || list_text[end] == '-' ||
                list_text[end] == ',' || list_text[end] == 'N' || list_text[end] == '/' ||
                list_text[end] == 'A')) {
          ++end;
        }
        list_text = list_text.substr(0, end);
        while (!list_text.empty() && list_text.back() == ',') list_text.remove_suffix(1);
        absl::StatusOr<std::vector<int32_t>> indices = ParseIndexList(list_text);
        if (!indices.ok()) return error(std::string(indices.status().message()));
        gres.has_indices = true;
        gres.indices = *std::move(indices);
      }
    }
    std::vector<std::string> tokens = absl::StrSplit(Abs(entry), ':');
    if (tokens.empty() || tokens[0].empty()) return error("no GRES name");
    gres.count = 1;
    if (tokens.size() > 1 && AllDigits(tokens.back())) {
      if (!ParseCount(tokens.back(), &gres.count)) return error("count too large");
      tokens.pop_back();
    }
    if (tokens.size() > 2) return error("expected name[:type][:count]");
    gres.name = tokens[0];
    if (tokens.size() == 2) gres.type = tokens[1];
    list.push_back(std::move(gres));
  }
  return list;
}

CommentParts SplitComment(std::string_view comment) {
  CommentParts parts;
  const size_t marker = comment.find(kCommentMarker);
  if (marker == std::string_view::npos) {
    parts.user = std::string(Trim(comment));
    return parts;
  }
  parts.user = std::string(Trim(comment.substr(0, marker)));
  parts.adapter = std::string(Trim(comment.substr(marker + sizeof(kCommentMarker) - 1)));
  return parts;
}

std::string JoinComment(std::string_view user, std::string_view status) {
  std::string text =
      user.empty() ? std::string(kCommentMarker) : absl::StrCat(Abs(user), " ", kCommentMarker);
  absl::StrAppend(&text, " ", Abs(status));
  if (text.size() > kMaxCommentBytes) {
    // Cut on a UTF-8 character boundary.
    size_t cut = kMaxCommentBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  return text;
}

absl::StatusOr<Directives> ParseDirectives(std::string_view user_comment) {
  Directives directives;
  for (absl::string_view word :
       absl::StrSplit(Abs(user_comment), absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&word, "checkpoint=")) {
      const size_t at = word.find('@');
      if (at == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("comment: checkpoint=", word, ": expected checkpoint=SIGNAL@SECONDS"));
      }
      const absl::string_view signal = word.substr(0, at);
      const absl::string_view wait = word.substr(at + 1);
      bool signal_ok = !signal.empty() && signal.size() <= 16;
      for (char c : signal) {
        signal_ok = signal_ok && (absl::ascii_isupper(static_cast<unsigned char>(c)) ||
                                  absl::ascii_isdigit(static_cast<unsigned char>(c)));
      }
      int64_t seconds = 0;
      if (!signal_ok || !ParseCount(std::string_view(wait.data(), wait.size()), &seconds) ||
          seconds > 3600) {
        return absl::InvalidArgumentError(absl::StrCat(
            "comment: checkpoint=", word,
            ": expected checkpoint=SIGNAL@SECONDS (signal in capitals like USR1, 0 to 3600 s)"));
      }
      directives.checkpoint_signal = std::string(signal);
      directives.checkpoint_wait_s = seconds;
    } else if (absl::ConsumePrefix(&word, "checkpoint_interval=")) {
      int64_t seconds = 0;
      if (!ParseCount(std::string_view(word.data(), word.size()), &seconds) || seconds == 0 ||
          seconds > (int64_t{1} << 40)) {
        return absl::InvalidArgumentError(absl::StrCat("comment: checkpoint_interval=", word,
                                                       ": expected a positive number of seconds"));
      }
      directives.checkpoint_interval_s = seconds;
    }
  }
  return directives;
}

}  // namespace gpupool::slurm
