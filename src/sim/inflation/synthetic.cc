// The built-in cluster and synthetic workload, so that `gpupool simulate` runs with no files.
//
// Both follow the published statistics of the Alibaba GPU cluster trace v2023 (openb): the node
// types and counts of openb_node_list_gpu_node.csv, and the class mix of
// openb_pod_list_default.csv (SOURCE.md), with each class's most common CPU and memory shapes.
#include <array>
#include <cstdint>
#include <string>

#include "fmt/format.h"
#include "gpupool/sim/rng.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim {

namespace {

struct NodeTypeSpec {
  const char* model;
  int32_t gpus;
  int64_t cpu_milli;
  int64_t memory_mib;
  int count;
};

// 1213 nodes, 6212 GPUs.
constexpr std::array<NodeTypeSpec, 15> kNodeTypes = {{
    {"A10", 1, 128000, 1048576, 2},
    {"G2", 8, 96000, 393216, 549},
    {"G3", 8, 128000, 786432, 39},
    {"P100", 1, 8000, 61440, 3},
    {"P100", 2, 8000, 61440, 2},
    {"P100", 2, 16000, 122880, 107},
    {"P100", 2, 64000, 262144, 22},
    {"T4", 2, 104000, 524288, 387},
    {"T4", 4, 96000, 393216, 17},
    {"V100M16", 1, 8000, 32768, 19},
    {"V100M16", 4, 32000, 131072, 28},
    {"V100M16", 8, 64000, 262144, 7},
    {"V100M16", 8, 82000, 344064, 1},
    {"V100M32", 4, 48000, 376832, 9},
    {"V100M32", 8, 96000, 786432, 21},
}};

// A weighted choice among (weight, value) pairs.
struct Shape {
  int weight;
  int64_t cpu_milli;
  int64_t memory_mib;
};

constexpr std::array<Shape, 5> kCpuOnlyShapes = {{
    {364, 12500, 57344},
    {284, 32000, 49152},
    {163, 8000, 30517},
    {120, 15400, 51200},
    {95, 16500, 51200},
}};
constexpr std::array<Shape, 7> kShareShapes = {{
    {1122, 3152, 5600},
    {625, 11908, 47104},
    {486, 8000, 30517},
    {189, 4000, 22888},
    {182, 4000, 15258},
    {152, 4152, 10600},
    {136, 4000, 30517},
}};
constexpr std::array<Shape, 8> kOneGpuShapes = {{
    {857, 11300, 49152},
    {534, 11400, 48128},
    {470, 3152, 5600},
    {255, 18708, 64512},
    {195, 9810, 41560},
    {158, 15700, 58368},
    {158, 12000, 24576},
    {153, 11908, 47104},
}};
// Per-GPU share sizes of sharing pods and their counts.
constexpr std::array<std::array<int, 2>, 14> kShares = {{
    {810, 1078},
    {470, 750},
    {320, 328},
    {650, 253},
    {230, 140},
    {460, 128},
    {590, 75},
    {160, 74},
    {550, 72},
    {220, 62},
    {370, 47},
    {110, 24},
    {480, 19},
    {50, 7},
}};

template <size_t N>
const Shape& Pick(const std::array<Shape, N>& shapes, Rng& rng) {
  int total = 0;
  for (const Shape& s : shapes) total += s.weight;
  int r = static_cast<int>(rng.Uniform(static_cast<uint64_t>(total)));
  for (const Shape& s : shapes) {
    r -= s.weight;
    if (r < 0) return s;
  }
  return shapes.back();
}

}  // namespace

Cluster BuiltinCluster() {
  Cluster cluster;
  int index = 0;
  for (const NodeTypeSpec& t : kNodeTypes) {
    for (int i = 0; i < t.count; ++i) {
      SimNode n;
      n.id = fmt::format("node-{:04d}", index++);
      n.gpu_model = t.model;
      n.gpu_count = t.gpus;
      n.cpu_milli = t.cpu_milli;
      n.memory_mib = t.memory_mib;
      cluster.nodes.push_back(std::move(n));
    }
  }
  return cluster;
}

Workload SyntheticWorkload(int pods, uint64_t seed) {
  // Class counts of the default pod list: 1088 CPU-only, 3078 sharing, 3911 one-GPU, 16 two-GPU,
  // 15 four-GPU, 44 eight-GPU (8152 pods).
  constexpr std::array<int, 6> kClassCounts = {1088, 3078, 3911, 16, 15, 44};
  int class_total = 0;
  for (int c : kClassCounts) class_total += c;
  int share_total = 0;
  for (const auto& s : kShares) share_total += s[1];
  Rng rng(seed);
  Workload workload;
  for (int i = 0; i < pods; ++i) {
    SimPod p;
    p.id = fmt::format("pod-{:05d}", i);
    int r = static_cast<int>(rng.Uniform(static_cast<uint64_t>(class_total)));
    int cls = 0;
    while (r >= kClassCounts[cls]) r -= kClassCounts[cls++];
    switch (cls) {
      case 0: {
        const Shape& s = Pick(kCpuOnlyShapes, rng);
        p.request.cpu_milli = s.cpu_milli;
        p.request.memory_mib = s.memory_mib;
        break;
      }
      case 1: {
        const Shape& s = Pick(kShareShapes, rng);
        p.request.cpu_milli = s.cpu_milli;
        p.request.memory_mib = s.memory_mib;
        int k = static_cast<int>(rng.Uniform(static_cast<uint64_t>(share_total)));
        int j = 0;
        while (k >= kShares[j][1]) k -= kShares[j++][1];
        p.request.gpu_milli = kShares[j][0];
        break;
      }
      case 2: {
        const Shape& s = Pick(kOneGpuShapes, rng);
        p.request.cpu_milli = s.cpu_milli;
        p.request.memory_mib = s.memory_mib;
        p.request.gpu_milli = 1000;
        break;
      }
      default: {
        // 2, 4 or 8 GPUs with about 8 cores and 32 GiB per GPU, as in the trace.
        const int64_t gpus = cls == 3 ? 2 : cls == 4 ? 4 : 8;
        p.request.gpu_milli = gpus * 1000;
        p.request.cpu_milli = gpus * 8050;
        p.request.memory_mib = gpus * 33024;
        break;
      }
    }
    workload.pods.push_back(std::move(p));
  }
  return workload;
}

}  // namespace gpupool::sim
