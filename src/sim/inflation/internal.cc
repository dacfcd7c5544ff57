// Shared pieces of the inflation protocol (internal.h).
#include "sim/inflation/internal.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace gpupool::sim {

namespace internal {

std::vector<std::string> ClusterModels(const Cluster& cluster) {
  std::vector<std::string> models;
  for (const SimNode& n : cluster.nodes) {
    if (!n.gpu_model.empty()) models.push_back(n.gpu_model);
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  return models;
}

uint64_t ModelBit(const std::vector<std::string>& models, std::string_view model) {
  auto it = std::lower_bound(models.begin(), models.end(), model);
  if (it == models.end() || *it != model) return 0;
  const size_t i = static_cast<size_t>(it - models.begin());
  return i < 64 ? (uint64_t{1} << i) : 0;
}

std::vector<PodShape> PodShapes(const Cluster& cluster, const Workload& workload) {
  const std::vector<std::string> models = ClusterModels(cluster);
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, uint64_t>, int32_t> classes;
  std::vector<PodShape> shapes;
  shapes.reserve(workload.pods.size());
  for (const SimPod& p : workload.pods) {
    PodShape s;
    s.request = p.request;
    s.count = static_cast<int32_t>(p.request.GpuCount());
    s.per = p.request.MilliPerGpu();
    if (p.gpu_models.empty()) {
      s.model_mask = ~uint64_t{0};
    } else {
      for (const std::string& m : p.gpu_models) s.model_mask |= ModelBit(models, m);
    }
    auto key = std::make_tuple(p.request.gpu_milli, p.request.cpu_milli, p.request.memory_mib,
                               p.request.gpu_memory_mib, s.model_mask);
    auto [it, inserted] = classes.emplace(key, static_cast<int32_t>(classes.size()));
    s.shape_class = it->second;
    shapes.push_back(s);
  }
  return shapes;
}

TaskClassTable MeasureTable(const Workload& workload) {
  std::vector<ResourceRequest> requests;
  std::vector<std::vector<std::string>> models;
  for (const SimPod& p : workload.pods) {
    requests.push_back(p.request);
    models.push_back(p.gpu_models);
  }
  return TaskClassTable::FromPods(requests, models, 100);
}

std::string BaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace internal

}  // namespace gpupool::sim
