// Numbers of the simulators' JSON outputs. The metrics are doubles (means, ratios, percentiles)
// printed with a fixed number of decimals; the JSON itself is written by gpupool::io's one
// JsonWriter (src/io/json_writer.h), which escapes every string.
//
// Not API.
#ifndef GPUPOOL_SRC_SIM_JSON_NUMBER_H_
#define GPUPOOL_SRC_SIM_JSON_NUMBER_H_

#include <cmath>
#include <string>

#include "fmt/format.h"
#include "io/json_writer.h"

namespace gpupool::sim::internal {

using io::internal::JsonWriter;

// `value` with `decimals` digits after the point, or null when it is not finite (JSON has no
// NaN or infinity).
inline void WriteDouble(JsonWriter& w, double value, int decimals) {
  if (!std::isfinite(value)) {
    w.Null();
    return;
  }
  w.Number(fmt::format("{:.{}f}", value, decimals));
}

inline void DoubleField(JsonWriter& w, std::string_view key, double value, int decimals) {
  w.Key(key);
  WriteDouble(w, value, decimals);
}

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_JSON_NUMBER_H_
