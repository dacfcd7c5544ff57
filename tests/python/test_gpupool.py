"""The Python module `gpupool` against the `gpupool` command: same bytes out, same messages.

Run by ctest (test python_module) with PYTHONPATH holding the built module, GPUPOOL_CLI the
built CLI and GPUPOOL_SOURCE_DIR the source tree.
"""
import glob
import json
import os
import re
import subprocess
import threading

import pytest

import gpupool

SOURCE = os.environ["GPUPOOL_SOURCE_DIR"]
CLI = os.environ["GPUPOOL_CLI"]
SNAPSHOTS = sorted(glob.glob(os.path.join(SOURCE, "examples", "snapshots", "*.json")))
POLICIES = sorted(glob.glob(os.path.join(SOURCE, "examples", "policies", "*.json")))
BAD = os.path.join(SOURCE, "tests", "cli", "data")
SINGLE = os.path.join(SOURCE, "examples", "snapshots", "single_gpu.json")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def cli(*args):
    """(exit code, stdout, stderr) of the CLI."""
    done = subprocess.run([CLI, *args], capture_output=True, check=False)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def cli_message(stderr, *paths):
    """The CLI's one-line error without "gpupool: FILE: " (the module says "snapshot: ")."""
    line = stderr.rstrip("\n")
    for path in paths:
        line = line.replace(f"gpupool: {path}: ", "")
    return line


def without_source(message):
    return message.split(": ", 1)[1]


def test_inputs_found():
    assert len(SNAPSHOTS) >= 6 and len(POLICIES) >= 3 and len(BAD_SNAPSHOTS) >= 7


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=os.path.basename)
@pytest.mark.parametrize("policy", [None] + POLICIES,
                         ids=lambda p: "default" if p is None else os.path.basename(p))
def test_schedule_is_the_clis_output(snapshot, policy):
    args = ["schedule", snapshot] + (["--policy", policy] if policy else [])
    code, out, _ = cli(*args)
    assert code == 0
    assert gpupool.schedule(read(snapshot), read(policy) if policy else None) == out


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=os.path.basename)
def test_validate_is_the_clis_summary(snapshot):
    code, out, _ = cli("validate", snapshot)
    assert code == 0
    assert f"{snapshot}: {gpupool.validate(read(snapshot))}" == out


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=os.path.basename)
def test_explain_is_the_clis_text_for_every_job(snapshot):
    text = read(snapshot)
    for job in json.loads(text).get("jobs", []):
        code, out, _ = cli("explain", snapshot, job["id"])
        assert code == 0
        assert gpupool.explain(text, job["id"]) == out


def test_keyword_arguments_and_bytes():
    text = read(SINGLE)
    policy = read(POLICIES[0])
    expected = gpupool.schedule(text, policy)
    assert gpupool.schedule(snapshot_json=text, policy_json=policy) == expected
    assert gpupool.schedule(text.encode(), policy.encode()) == expected
    assert gpupool.schedule(text, policy_json=None) == gpupool.schedule(text)


BAD_SNAPSHOTS = [p for p in sorted(glob.glob(os.path.join(BAD, "*.json")))
                 if "policy" not in os.path.basename(p)]  # Policy files: checked below.


@pytest.mark.parametrize("bad", BAD_SNAPSHOTS, ids=os.path.basename)
def test_invalid_snapshot_raises_the_clis_message(bad):
    with open(bad, "rb") as f:
        data = f.read()  # Bytes: not_utf8.json must reach gpupool's own UTF-8 check.
    code, _, err = cli("schedule", bad)
    assert code == 1
    with pytest.raises(gpupool.Error) as raised:
        gpupool.schedule(data)
    assert str(raised.value).startswith("snapshot: ")
    assert without_source(str(raised.value)) == cli_message(err, bad)
    with pytest.raises(gpupool.Error) as raised:
        gpupool.validate(data)
    assert without_source(str(raised.value)) == cli_message(cli("validate", bad)[2], bad)


def test_invalid_policy_names_the_policy():
    policy = os.path.join(BAD, "policy_with_scorer.json")
    code, _, err = cli("schedule", SINGLE, "--policy", policy)
    assert code == 1
    with pytest.raises(gpupool.Error) as raised:
        gpupool.schedule(read(SINGLE), read(policy))
    assert str(raised.value) == "policy: " + cli_message(err, policy)


def test_error_is_a_value_error():
    assert issubclass(gpupool.Error, ValueError)
    with pytest.raises(ValueError, match=r"^snapshot: .*invalid JSON"):
        gpupool.schedule("{")
    with pytest.raises(gpupool.Error, match=r"^policy: invalid JSON"):
        gpupool.schedule(read(SINGLE), "")


def test_embedded_nul_is_text():
    with pytest.raises(gpupool.Error, match=r"^snapshot: "):
        gpupool.schedule('{"nodes": []}\0')


def test_unknown_job():
    with pytest.raises(gpupool.Error, match=r'^snapshot: no job "nobody"'):
        gpupool.explain(read(SINGLE), "nobody")
    # Bytes that are not UTF-8, and a NUL, come back escaped: the message is text (an outside
    # test got UnicodeDecodeError, and a message cut at the NUL).
    with pytest.raises(gpupool.Error, match=r'^snapshot: no job "\\xff\\xfe" in the snapshot$'):
        gpupool.explain(read(SINGLE), b"\xff\xfe")
    with pytest.raises(gpupool.Error, match=r'^snapshot: no job "a\\x00b" in the snapshot$'):
        gpupool.explain(read(SINGLE), b"a\0b")


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        gpupool.schedule(42)
    with pytest.raises(TypeError):
        gpupool.schedule(read(SINGLE), 3.5)


def test_version_is_the_clis():
    code, out, _ = cli("--version")
    assert code == 0
    assert gpupool.__version__ in out


def test_threads_get_the_same_bytes():
    # Each call releases the GIL; eight threads scheduling at once see the serial result.
    text = read(os.path.join(SOURCE, "examples", "snapshots", "full_pool_mixed_reasons.json"))
    expected = gpupool.schedule(text)
    results = [None] * 8

    def work(i):
        results[i] = [gpupool.schedule(text) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == [expected] * 5 for r in results)


def test_invalid_policy_values_name_the_policy():
    bad = '{"las_thresholds_gpu_seconds": [7200, 3250]}'
    with pytest.raises(gpupool.Error, match=r"^policy: policy\.las_thresholds_gpu_seconds\[1\]: "):
        gpupool.schedule(read(SINGLE), bad)


# The replay (docs/replay.md) from Python, against `gpupool simulate --protocol replay`.
TRACE = os.environ["GPUPOOL_SMALL_TRACE"]  # written at configure time by make_small_philly.py
SMALL_POOL = {"nodes": 4, "gpus_per_node": 8, "nodes_per_rack": 2}


def cli_replay(policy, tmp_path, *extra):
    """The CLI's replay metrics. Its JSON may carry more (accounting): only the metrics' keys."""
    out = tmp_path / f"{policy}.json"
    code, _, err = cli("simulate", "--protocol", "replay", "--trace", f"philly:{TRACE}",
                       "--policy", policy, "--cluster", "4x8/2", "--json", str(out), "--quiet",
                       *extra)
    assert code == 0, err
    return {k: v for k, v in json.loads(out.read_text()).items() if k in METRIC_KEYS}


METRIC_KEYS = {"policy", "jobs", "jobs_completed", "jobs_unschedulable", "jct_mean_s",
               "jct_p50_s", "jct_p99_s", "queue_delay_mean_s", "queue_delay_p99_s", "makespan_s",
               "utilization", "preemptions", "gpu_hours_lost_to_preemption", "jain_fairness",
               "max_wait_s", "cycles", "queues"}


def test_replay_policy_names():
    assert gpupool.replay_policy_names() == ["fifo", "las", "las-free", "default"]


@pytest.mark.parametrize("policy", ["fifo", "las", "default"])
def test_simulate_replay_is_the_clis_metrics(policy, tmp_path):
    metrics = gpupool.simulate_replay(read(TRACE), policy, **SMALL_POOL)
    assert set(metrics) == METRIC_KEYS
    assert metrics == cli_replay(policy, tmp_path)
    assert metrics["policy"] == policy
    assert metrics["jobs"] == 240 and metrics["jobs_completed"] == 240


def test_simulate_replay_window(tmp_path):
    metrics = gpupool.simulate_replay(read(TRACE), "las", window_start="2017-10-02",
                                      window_days=1, **SMALL_POOL)
    assert metrics == cli_replay("las", tmp_path, "--window-start", "2017-10-02",
                                 "--window-days", "1")
    assert 0 < metrics["jobs"] < 240


def test_simulate_replay_with_a_host_policy():
    # The engine policy of every cycle replaced: the default Policy never preempts.
    metrics = gpupool.simulate_replay(read(TRACE), "las", policy_json='{"name": "no-preemption"}',
                                      **SMALL_POOL)
    assert metrics["policy"] == "no-preemption"
    assert metrics["preemptions"] == 0
    assert metrics["jobs_completed"] == 240
    las = gpupool.simulate_replay(read(TRACE), "las", **SMALL_POOL)
    assert las["preemptions"] > 0


def test_the_docs_example_prints_what_embedding_md_shows():
    # docs/embedding.md's notebook example, with the lines it shows as printed (an outside test
    # found them stale).
    doc = read(os.path.join(SOURCE, "docs", "embedding.md"))
    shown = [line[2:] for line in doc.splitlines() if re.match(r"^# \S+ +JCT ", line)]
    rows = {p: gpupool.simulate_replay(read(TRACE), p, **SMALL_POOL)
            for p in gpupool.replay_policy_names()}
    printed = [f"{name:10} JCT {m['jct_mean_s']:8.0f} s  preemptions {m['preemptions']:3}  "
               f"Jain {m['jain_fairness']:.3f}" for name, m in rows.items()]
    assert printed == shown


def test_simulate_replay_is_deterministic():
    first = gpupool.simulate_replay(read(TRACE), "default", **SMALL_POOL)
    assert gpupool.simulate_replay(read(TRACE), "default", **SMALL_POOL) == first


def test_simulate_replay_errors():
    trace = read(TRACE)
    with pytest.raises(gpupool.Error, match=r"^trace:3: num_gpus: "):
        gpupool.simulate_replay("timestamp,duration,num_gpus,gpu_time,cluster\n"
                                "2017-10-01 00:00:00,10,1,10,a\n"
                                "2017-10-01 00:00:00,10,x,10,a\n")
    with pytest.raises(gpupool.Error, match=r"no-such-policy"):
        gpupool.simulate_replay(trace, "no-such-policy")
    with pytest.raises(gpupool.Error, match=r"^window_start: "):
        gpupool.simulate_replay(trace, window_start="October")
    with pytest.raises(gpupool.Error, match=r"^policy: "):
        gpupool.simulate_replay(trace, policy_json="{")
    # A policy the reader takes but validation refuses, and one that does not fit the replayed
    # pool, are input errors too (an outside test got RuntimeError, "a bug of gpupool's").
    with pytest.raises(gpupool.Error, match=r"^policy: policy.starvation_bound_s: must be >= 0"):
        gpupool.simulate_replay(trace, "las", policy_json='{"starvation_bound_s": -1}',
                                **SMALL_POOL)
    with pytest.raises(gpupool.Error, match=r"^policy: does not fit the replayed pool: "):
        gpupool.simulate_replay(trace, "las", **SMALL_POOL, policy_json=(
            '{"headroom": [{"gpu_model": "H100", "count": 1, "min_priority": 1}]}'))
    with pytest.raises(gpupool.Error, match=r"at least 1"):
        gpupool.simulate_replay(trace, nodes=0)


SCENARIOS = os.path.join(SOURCE, "examples", "scenarios")


@pytest.mark.parametrize(
    "scenario", ["backfill", "consolidation", "health_cordon", "shorter_victim", "take_back"]
)
def test_apply_is_the_clis_snapshot_and_a_fixed_point(scenario, tmp_path):
    snapshot = os.path.join(SCENARIOS, scenario + ".snapshot.json")
    policy = read(os.path.join(SCENARIOS, scenario + ".policy.json"))
    decisions = gpupool.schedule(read(snapshot), policy)
    decisions_file = tmp_path / "decisions.json"
    decisions_file.write_text(decisions)
    code, out, _ = cli("apply", snapshot, str(decisions_file))
    assert code == 0
    applied = gpupool.apply(read(snapshot), decisions)
    assert applied == out
    again = json.loads(gpupool.schedule(applied, policy))
    for kind in ("starts", "preemptions", "migrations", "resizes"):
        assert again[kind] == [], kind


def test_apply_errors_name_the_decisions():
    snapshot = read(os.path.join(SCENARIOS, "backfill.snapshot.json"))
    with pytest.raises(gpupool.Error, match=r"^decisions: \(root\): invalid JSON"):
        gpupool.apply(snapshot, "{")
    other = read(os.path.join(SCENARIOS, "health_cordon.decisions.json"))
    with pytest.raises(gpupool.Error,
                       match=r"^decisions: node_actions\[n4\]: no such node in the snapshot"):
        gpupool.apply(snapshot, other)
    with pytest.raises(gpupool.Error, match=r"^snapshot: "):
        gpupool.apply("{", other)
