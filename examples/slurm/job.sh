#!/usr/bin/env bash
# A stand-in for a training job: one task per node reports where it runs and which GPUs it got,
# then it "trains" for $WORK_S seconds. On SIGUSR1 (the checkpoint signal gpupool's adapter sends
# before a preemption, when the job's comment says checkpoint=USR1@SECONDS) it writes a
# checkpoint line. Submitted with --open-mode=append, the output keeps every run of the job.
echo "start job=$SLURM_JOB_ID restart=${SLURM_RESTART_COUNT:-0} nodes=$SLURM_JOB_NODELIST"
trap 'echo "checkpoint job=$SLURM_JOB_ID"' USR1
srun --ntasks-per-node=1 bash -c 'echo "task job=$SLURM_JOB_ID node=$SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"'
# Sleep in short steps so that the trap runs while the job waits.
for _ in $(seq 1 $((${WORK_S:-5} * 5))); do sleep 0.2; done
echo "done job=$SLURM_JOB_ID"
