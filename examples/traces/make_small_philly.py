"""Writes small_philly.csv: a two-day, three-tenant trace in the Philly CSV format
(docs/replay.md), for examples/replay_experiment.cc and the Python module's tests.

Seeded, so the file is reproducible: python3 make_small_philly.py > small_philly.csv
Job sizes and durations follow the shape of the Philly trace: mostly 1-GPU jobs, a few large
gangs; most jobs short, a heavy tail of long ones.
"""
import random
import time

rng = random.Random(20171001)
start = 1506816000  # 2017-10-01 00:00:00 UTC
print("timestamp,duration,num_gpus,gpu_time,cluster")
t = start
for _ in range(240):
    t += int(rng.expovariate(1 / 700))
    gpus = rng.choices([1, 2, 4, 8, 16], weights=[55, 15, 15, 10, 5])[0]
    duration = round(min(rng.lognormvariate(7.2, 1.6), 86400.0), 1)
    cluster = rng.choices(["vc-alpha", "vc-beta", "vc-gamma"], weights=[5, 3, 2])[0]
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    print(f"{stamp},{duration},{gpus},{round(duration * gpus, 1)},{cluster}")
