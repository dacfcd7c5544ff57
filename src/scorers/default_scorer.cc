// gpupool's default placement scorer (experimental knobs while it is being tuned).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/scorers/scorers.h"

namespace gpupool {

namespace {

struct Options {
  bool memory = true;       // classes must fit memory too
  bool cpu_always = false;  // CPU-only classes count all idle (FGD code) or only when lacking
  int quant = 0;            // 0: exact; 1: FGD sigmoid buckets
  int tiebreak = 0;         // 0: none; 1: best fit; 2: worst fit
  int coverage = 100;
};

Options FromEnv() {
  Options o;
  const char* e = std::getenv("GPUPOOL_DEFAULT_OPTS");
  if (e == nullptr) return o;
  std::string s(e);
  auto get = [&](const char* k, int def) {
    size_t p = s.find(k);
    if (p == std::string::npos) return def;
    return std::atoi(s.c_str() + p + std::string(k).size() + 1);
  };
  o.memory = get("mem", 1);
  o.cpu_always = get("cpuall", 0);
  o.quant = get("quant", 0);
  o.tiebreak = get("tb", 0);
  o.coverage = get("cov", 100);
  return o;
}

struct Cls {
  int64_t cpu, mem, per;
  int64_t count;  // GPUs
  int64_t weight;
  std::vector<std::string> models;
};

class DefaultScorer final : public PlacementScorer {
 public:
  DefaultScorer(std::vector<Cls> classes, int64_t total, Options o)
      : classes_(std::move(classes)), total_(total), o_(o) {}
  std::string_view Name() const override { return "default"; }

  int64_t Score(const NodeView& node, const ResourceRequest& request) const override {
    std::vector<int64_t> free(node.free_gpu_milli.begin(), node.free_gpu_milli.end());
    const int64_t before = Frag(node, node.free_cpu_milli, node.free_memory_mib, free);
    if (request.gpu_milli > 0 && request.gpu_milli < kMilliPerGpu) {
      int best = -1;
      for (size_t i = 0; i < free.size(); ++i) {
        if (free[i] >= request.gpu_milli && (best < 0 || free[i] < free[best])) {
          best = static_cast<int>(i);
        }
      }
      if (best >= 0) free[best] -= request.gpu_milli;
    } else {
      int64_t want = request.GpuCount();
      for (size_t i = 0; i < free.size() && want > 0; ++i) {
        if (free[i] == kMilliPerGpu) {
          free[i] = 0;
          --want;
        }
      }
    }
    const int64_t cpu_after = node.free_cpu_milli - request.cpu_milli;
    const int64_t mem_after = node.free_memory_mib - request.memory_mib;
    const int64_t after = Frag(node, cpu_after, mem_after, free);
    int64_t primary;
    if (o_.quant == 1) {
      const double d = static_cast<double>(before - after) / static_cast<double>(total_);
      primary = static_cast<int64_t>(100.0 / (1.0 + std::exp(-d / 1000.0)));
    } else {
      primary = -(after - before);
    }
    int64_t gpu_left_total = 0;
    for (int64_t f : free) gpu_left_total += f;
    const int64_t gpu_cap = static_cast<int64_t>(free.size()) * kMilliPerGpu;
    int64_t left = 0;
    if (node.cpu_milli_capacity > 0) left += (cpu_after << 19) / node.cpu_milli_capacity;
    if (gpu_cap > 0) left += (gpu_left_total << 19) / gpu_cap;
    int64_t secondary = 0;
    if (o_.tiebreak == 1) secondary = (int64_t{1} << 21) - left;
    if (o_.tiebreak == 2) secondary = left;
    return primary * (int64_t{1} << 22) + secondary;
  }

 private:
  int64_t Frag(const NodeView& node, int64_t cpu, int64_t mem,
               std::span<const int64_t> free) const {
    int64_t idle = 0;
    for (int64_t f : free) idle += f;
    if (idle == 0) return 0;
    int64_t sum = 0;
    for (const Cls& c : classes_) {
      int64_t fr;
      const bool res_ok = cpu >= c.cpu && (!o_.memory || mem >= c.mem);
      if (c.count == 0) {
        fr = (o_.cpu_always || !res_ok) ? idle : 0;
      } else if (!res_ok || !ModelAllowed(c.models, node.gpu_model)) {
        fr = idle;
      } else {
        int64_t usable = 0, frag = 0;
        for (int64_t f : free) {
          if (f >= c.per) {
            ++usable;
          } else {
            frag += f;
          }
        }
        fr = usable < c.count ? idle : frag;
      }
      sum += c.weight * fr;
    }
    return sum;
  }

  std::vector<Cls> classes_;
  int64_t total_;
  Options o_;
};

}  // namespace

std::shared_ptr<const PlacementScorer> MakeDefaultScorer(TaskClassTable popularity) {
  Options o = FromEnv();
  std::vector<Cls> classes;
  int64_t total = 0;
  for (const TaskClass& t : popularity.classes()) {
    classes.push_back(Cls{t.request.cpu_milli, t.request.memory_mib, t.request.MilliPerGpu(),
                          t.request.GpuCount(), t.count, t.gpu_models});
    total += t.count;
  }
  return std::make_shared<DefaultScorer>(std::move(classes), std::max<int64_t>(total, 1), o);
}

}  // namespace gpupool
