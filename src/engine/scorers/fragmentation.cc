#include "gpupool/scorers/fragmentation.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpupool {

namespace {

// The identity of a class. An ordered map keeps the table independent of input order.
using ClassKey = std::tuple<int64_t, int64_t, int64_t, std::vector<std::string>>;

}  // namespace

TaskClassTable TaskClassTable::FromPods(std::span<const ResourceRequest> requests,
                                        std::span<const std::vector<std::string>> models,
                                        int coverage_percent, bool with_memory,
                                        std::span<const int64_t> counts_per_entry) {
  std::map<ClassKey, int64_t> counts;
  for (size_t i = 0; i < requests.size(); ++i) {
    std::vector<std::string> m = i < models.size() ? models[i] : std::vector<std::string>{};
    const int64_t memory = with_memory ? requests[i].memory_mib : 0;
    counts[{requests[i].cpu_milli, requests[i].gpu_milli, memory, std::move(m)}] +=
        i < counts_per_entry.size() ? counts_per_entry[i] : 1;
  }
  TaskClassTable table;
  for (const auto& [key, count] : counts) {
    TaskClass c;
    c.request.cpu_milli = std::get<0>(key);
    c.request.gpu_milli = std::get<1>(key);
    c.request.memory_mib = std::get<2>(key);
    c.gpu_models = std::get<3>(key);
    c.count = count;
    table.classes_.push_back(std::move(c));
  }
  // Most popular first; the map order (request, then models) breaks ties, so the cut below is
  // deterministic.
  std::stable_sort(table.classes_.begin(), table.classes_.end(),
                   [](const TaskClass& a, const TaskClass& b) { return a.count > b.count; });
  int64_t all = 0;
  for (const TaskClass& c : table.classes_) all += c.count;
  if (coverage_percent < 100) {
    int64_t kept = 0;
    size_t n = 0;
    // The fewest classes whose pods reach the coverage (kept * 100 >= coverage * all).
    while (n < table.classes_.size() && kept * 100 < int64_t{coverage_percent} * all) {
      kept += table.classes_[n].count;
      ++n;
    }
    table.classes_.resize(n);
  }
  for (const TaskClass& c : table.classes_) table.total_count_ += c.count;
  return table;
}

bool ModelAllowed(std::span<const std::string> models, std::string_view gpu_model) {
  if (models.empty()) return true;
  for (const std::string& m : models) {
    if (m == gpu_model) return true;
  }
  return false;
}

int64_t ClassFragmentationMilli(const TaskClass& task_class, bool model_allowed,
                                int64_t free_cpu_milli, std::span<const int64_t> free_gpu_milli,
                                CpuClassRule rule) {
  int64_t idle = 0;
  for (int64_t f : free_gpu_milli) idle += f;
  if (idle == 0) return 0;
  const ResourceRequest& r = task_class.request;
  const int64_t count = r.GpuCount();
  if (count == 0) {
    if (rule == CpuClassRule::kAlwaysFragmented) return idle;
    return free_cpu_milli >= r.cpu_milli ? 0 : idle;
  }
  if (!model_allowed || free_cpu_milli < r.cpu_milli) return idle;
  const int64_t per = r.MilliPerGpu();
  int64_t usable_gpus = 0;
  int64_t fragmented = 0;
  for (int64_t f : free_gpu_milli) {
    if (f >= per) {
      ++usable_gpus;
    } else {
      fragmented += f;
    }
  }
  if (usable_gpus < count) return idle;
  return fragmented;
}

int64_t WeightedFragmentation(const TaskClassTable& table, std::string_view gpu_model,
                              int64_t free_cpu_milli, std::span<const int64_t> free_gpu_milli,
                              CpuClassRule rule) {
  int64_t sum = 0;
  for (const TaskClass& c : table.classes()) {
    sum += c.count * ClassFragmentationMilli(c, ModelAllowed(c.gpu_models, gpu_model),
                                             free_cpu_milli, free_gpu_milli, rule);
  }
  return sum;
}

}  // namespace gpupool
