// Umbrella header: the whole core API.
#ifndef GPUPOOL_GPUPOOL_H_
#define GPUPOOL_GPUPOOL_H_

#include "gpupool/apply.h"
#include "gpupool/decisions.h"
#include "gpupool/drain_plan.h"
#include "gpupool/explain.h"
#include "gpupool/gpu_model.h"
#include "gpupool/job.h"
#include "gpupool/metrics.h"
#include "gpupool/node.h"
#include "gpupool/placement_scorer.h"
#include "gpupool/policy.h"
#include "gpupool/queue.h"
#include "gpupool/resources.h"
#include "gpupool/schedule.h"
#include "gpupool/snapshot.h"
#include "gpupool/topology.h"
#include "gpupool/version.h"

#endif  // GPUPOOL_GPUPOOL_H_
