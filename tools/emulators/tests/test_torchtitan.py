"""The torchtitan emulator (attune_emulators/torchtitan.py), run as a process
the way a job runs it: `torchrun --nproc-per-node 8 --standalone -m
torchtitan.train ...` (every rank prints) or `python -m torchtitan.train ...`.
Generation A is v0.2.2 (TOML), generation B is main (--module/--config).

Run: cd tools/emulators && /usr/bin/python3 -m unittest tests.test_torchtitan -v
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.path.dirname(HERE), "bin")
FIXTURES = os.path.join(HERE, "fixtures", "torchtitan")
CORPUS = os.environ.get("ATTUNE_CORPUS", "")
RECIPES = os.path.join(CORPUS, "recipes", "torchtitan") if CORPUS else ""
A, B = "0.2.2", "main"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STEP = re.compile(r"\[titan\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - root - INFO - step: +(\d+)  loss: +[\d.]+  "
                  r"grad_norm: +[\d.]+  memory: +[\d.]+GiB\([\d.]+%\)  tps: [\d,]+  tflops: [\d,.]+  "
                  r"mfu: (?:[\d.]+%|N/A)$")

_CLEAN = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR",
          "MASTER_PORT", "TORCHELASTIC_RUN_ID", "NGPU", "LOG_RANK", "COLUMNS", "SLURM_JOB_ID", "SLURM_STEP_ID",
          "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
          "TORCH_FR_DUMP_TEMP_FILE", "OMP_NUM_THREADS")


def _env(version, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ATTUNE_EMULATE_") and not k.startswith("PET_") and k not in _CLEAN}
    env["ATTUNE_EMULATE_TIME_SCALE"] = "100000"
    if version == A:
        env["ATTUNE_EMULATE_TORCHTITAN_VERSION"] = A
    env.update(extra or {})
    return env


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="titan-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def torchrun(self, version, args, nproc=8, extra=None, timeout=60):
        cmd = [os.path.join(BIN, "torchrun"), "--nproc-per-node", str(nproc), "--standalone", "-m",
               "torchtitan.train"] + args
        return subprocess.run(cmd, cwd=self.dir, env=_env(version, extra), capture_output=True, text=True,
                              timeout=timeout)

    def torchrun_many(self, runs, timeout=120):
        """Several torchrun launches at once, each in its own directory:
        {name: (version, args, nproc)} -> {name: (CompletedProcess, dir)}."""
        procs = {}
        for name, (version, args, nproc) in runs.items():
            cwd = os.path.join(self.dir, name)
            os.makedirs(cwd)
            cmd = [os.path.join(BIN, "torchrun"), "--nproc-per-node", str(nproc), "--standalone", "-m",
                   "torchtitan.train"] + args
            procs[name] = (subprocess.Popen(cmd, cwd=cwd, env=_env(version), stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True), cwd, cmd)
        out = {}
        for name, (p, cwd, cmd) in procs.items():
            stdout, stderr = p.communicate(timeout=timeout)
            out[name] = (subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr), cwd)
        return out

    def python(self, version, args, extra=None, timeout=30):
        cmd = [os.path.join(BIN, "python"), "-m", "torchtitan.train"] + args
        return subprocess.run(cmd, cwd=self.dir, env=_env(version, extra), capture_output=True, text=True,
                              timeout=timeout)

    def steps_by_number(self, stdout):
        counts = {}
        for line in stdout.splitlines():
            m = STEP.match(ANSI.sub("", line))
            if m:
                counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + 1
        return counts

    def assertTrained(self, r, steps, every, ranks=8):
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        want = {1: ranks}
        want.update({s: ranks for s in range(every, steps + 1, every)})
        self.assertEqual(self.steps_by_number(r.stdout), want)
        self.assertEqual(r.stdout.count("Sleeping 2 seconds for other ranks to complete"), 1)
        self.assertEqual(r.stdout.count("Process group destroyed"), ranks)

    def prog(self):
        return os.path.join(sys.prefix, "lib", "python{}.{}".format(*sys.version_info[:2]), "site-packages",
                            "torchtitan", "train.py")


class GenerationA(Case):
    """v0.2.2: --job.config_file, TOML sections checked against JobConfig."""

    def test_fixture_runs_and_every_rank_logs_at_the_interval(self):
        r = self.torchrun(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml")])
        self.assertTrained(r, 20, 5)
        self.assertEqual(r.stdout.count("Training completed"), 1)  # rank 0 only in A
        self.assertEqual(r.stdout.count("Starting job: emulator test job"), 8)
        self.assertIn("Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1, "
                      "etp=1", r.stdout)
        self.assertIn("Trainer is initialized with local batch size 2, global batch size 16, gradient accumulation "
                      "steps 1, sequence length 2048, total steps 20 (warmup 200)", r.stdout)
        colored = [l for l in r.stdout.splitlines() if "step: 20" in ANSI.sub("", l)][0]
        self.assertIn("\x1b[31mstep: 20  \x1b[32mloss: ", colored)
        self.assertTrue(colored.endswith("%\x1b[39m"))

    def test_overrides_equals_booleans_and_lists(self):
        r = self.torchrun(A, ["--job.config_file=" + os.path.join(FIXTURES, "small.toml"), "--training.steps=12",
                              "--metrics.log-freq", "4", "--metrics.disable_color_printing",
                              "--compile.enable", "--compile.components", "model,loss",
                              "--checkpoint.no-enable"], nproc=2)
        self.assertTrained(r, 12, 4, ranks=2)
        self.assertNotIn("\x1b[", r.stdout)
        self.assertIn("Compiling the loss function with torch.compile", r.stdout)
        self.assertIn("Compiling each TransformerBlock with torch.compile", r.stdout)

    def test_unknown_flag_is_tyros_box_and_exit_2(self):
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml"), "--foo.bar", "1"],
                        extra={"COLUMNS": "200"})
        self.assertEqual(r.returncode, 2)
        last = "For full helptext, run {} --help".format(self.prog())
        w = len(last) + 4
        title = "Unrecognized options"
        want = ["╭─ " + title + " " + "─" * (w - 5 - len(title)) + "╮",
                "│ " + "Unrecognized options: --foo.bar, 1".ljust(w - 4) + " │",
                "│ " + "─" * (w - 4) + " │",
                "│ " + last.ljust(w - 4) + " │",
                "╰" + "─" * (w - 2) + "╯"]
        self.assertEqual(r.stderr.splitlines(), want)

    def test_near_miss_flag_suggests_the_real_one(self):
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml"), "--training.step", "5"],
                        extra={"COLUMNS": "80"})
        self.assertEqual(r.returncode, 2)
        lines = r.stderr.splitlines()
        self.assertTrue(all(len(l) == 80 for l in lines), lines)
        self.assertIn("│ Unrecognized options: --training.step, 5", r.stderr)
        self.assertIn("│ Perhaps you meant:", r.stderr)
        self.assertIn("│     --training.steps INT", r.stderr)
        self.assertIn("│         (default: 20)", r.stderr)

    def test_bad_value_and_bad_choice(self):
        r = self.python(A, ["--training.steps", "ten"], extra={"COLUMNS": "200"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("╭─ Value error", r.stderr)
        self.assertIn("Error parsing --training.steps: invalid literal for int() with base 10: 'ten'", r.stderr)
        r = self.python(A, ["--checkpoint.async_mode", "sometimes"], extra={"COLUMNS": "200"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("invalid choice 'sometimes' for argument '--checkpoint.async-mode'. Expected one of "
                      "('disabled', 'async', 'async_with_pinned_mem').", r.stderr)
        r = self.python(A, ["--checkpoint.enable", "true"])  # a flag takes no value
        self.assertEqual(r.returncode, 2)
        self.assertIn("Unrecognized options: true", r.stderr)

    def test_unknown_toml_section_and_key(self):
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "unknown_section.toml")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: Invalid field names in <class 'torchtitan.config.job_config.JobConfig'> data: "
                      "{'trainer'}.\nPlease modify your .toml config file or override these fields from the command "
                      "line.\nRun `NGPU=1 ./run_train.sh --help` to read all valid fields.", r.stderr)
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "unknown_key.toml")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("<class 'torchtitan.config.job_config.Checkpoint'> data: {'enable_checkpoint'}", r.stderr)

    def test_missing_config_file(self):
        r = self.python(A, ["--job.config_file", "nowhere.toml"])
        self.assertEqual(r.returncode, 1)
        self.assertIn(" - root - ERROR - Error while loading config file: nowhere.toml", r.stdout)
        self.assertTrue(r.stderr.rstrip().endswith(
            "FileNotFoundError: [Errno 2] No such file or directory: 'nowhere.toml'"))

    def test_without_torchrun_local_rank_is_missing(self):
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("Starting job: emulator test job", r.stdout)
        self.assertTrue(r.stderr.rstrip().endswith("KeyError: 'LOCAL_RANK'"))

    def test_parallel_degrees_against_world_size(self):
        small = os.path.join(FIXTURES, "small.toml")
        r = self.torchrun(A, ["--job.config_file", small, "--parallelism.tensor_parallel_degree", "8"], nproc=4)
        self.assertEqual(r.returncode, 1)
        self.assertIn("    assert dp_shard >= 1\nAssertionError\n", r.stderr)
        r = self.torchrun(A, ["--job.config_file", small, "--parallelism.data_parallel_shard_degree", "3"], nproc=4)
        self.assertEqual(r.returncode, 1)
        self.assertIn("AssertionError: Invalid parallel dims: dp_replicate(1) * dp_shard(3) * cp(1) * tp(1) * pp(1) "
                      "!= WORLD_SIZE(4)", r.stderr)
        r = self.torchrun(A, ["--job.config_file", small, "--training.global_batch_size", "3"], nproc=2)
        self.assertEqual(r.returncode, 1)
        self.assertIn("AssertionError: global batch size must be multiple of local batch size times data-parallel "
                      "degree (3 % (2 * 2) != 0)", r.stderr)

    def test_checkpoint_save_resume_and_finished_run(self):
        small = os.path.join(FIXTURES, "small.toml")
        r = self.torchrun(A, ["--job.config_file", small, "--checkpoint.enable", "--checkpoint.no-last-save-model-only"],
                          nproc=2)
        self.assertTrained(r, 20, 5, ranks=2)
        folder = os.path.join(self.dir, "outputs", "checkpoint")
        for step in (10, 20):
            self.assertTrue(os.path.isfile(os.path.join(folder, "step-{}".format(step), ".metadata")))
            self.assertTrue(os.path.isfile(os.path.join(folder, "step-{}".format(step), "__1_0.distcp")))
        self.assertIn("Saving a full checkpoint at last step, step 20.", r.stdout)
        self.assertIn("Finished saving the checkpoint (or staging if async is enabled)in ", r.stdout)
        # resume with more steps: from the highest step-N with .metadata
        r = self.torchrun(A, ["--job.config_file", small, "--checkpoint.enable", "--training.steps", "30"], nproc=2)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Loading the checkpoint from ./outputs/checkpoint/step-20.", r.stdout)
        self.assertEqual(r.stdout.count("Training starts at step 21"), 2)
        self.assertEqual(self.steps_by_number(r.stdout), {25: 2, 30: 2})
        self.assertIn("Saving a model only checkpoint in torch.float32 at last step, step 30.", r.stdout)
        # the run is finished and its last checkpoint is model-only: all states cannot be loaded
        r = self.torchrun(A, ["--job.config_file", small, "--checkpoint.enable", "--training.steps", "30"], nproc=2)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Loading the checkpoint from ./outputs/checkpoint/step-30.", r.stdout)
        self.assertIn("RuntimeError: Missing key in checkpoint state_dict: train_state.step.", r.stderr)

    def test_profiler_traces_and_tensorboard(self):
        r = self.torchrun(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml"), "--profiling.enable_profiling",
                              "--profiling.profile_freq", "10", "--metrics.enable_tensorboard"], nproc=2)
        self.assertTrained(r, 20, 5, ranks=2)
        self.assertEqual(r.stdout.count("Dumping profiler traces at step 10"), 2)
        for step in (10, 20):
            for rank in (0, 1):
                self.assertTrue(os.path.isfile(os.path.join(
                    self.dir, "outputs", "profile_traces", "iteration_{}".format(step), "rank{}_trace.json".format(rank))))
        tb = os.listdir(os.path.join(self.dir, "outputs", "tb"))
        self.assertEqual(len(tb), 1)
        self.assertTrue(re.match(r"\d{8}-\d{4}$", tb[0]))
        self.assertEqual(r.stdout.count("TensorBoard logging enabled. Logs will be saved at ./outputs/tb/"), 1)

    def test_oom_fails_every_rank_with_torchs_message(self):
        pred = os.path.join(self.dir, "prediction.json")
        with open(pred, "w") as f:
            json.dump({"step_time_s": 1.0, "failure": "oom", "error": "x", "fails_at_step": 3,
                       "memory": {"hbm_gib": 80, "peak_reserved_gib": 95}}, f)
        r = self.python(A, ["--job.config_file", os.path.join(FIXTURES, "small.toml")], extra={
            "ATTUNE_EMULATE_PREDICTION": pred, "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1",
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(self.steps_by_number(r.stdout), {1: 1})
        self.assertIn("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate", r.stderr)

    def test_sigterm_kills_without_a_word(self):
        env = _env(A, {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": "29500", "ATTUNE_EMULATE_TIME_SCALE": "2000"})
        p = subprocess.Popen([os.path.join(BIN, "python"), "-m", "torchtitan.train", "--job.config_file",
                              os.path.join(FIXTURES, "small.toml"), "--training.steps", "100000",
                              "--metrics.log_freq", "1"], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        for line in p.stdout:
            if "step:  2" in ANSI.sub("", line):
                break
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=10)
        self.assertEqual(p.returncode, -signal.SIGTERM)
        self.assertNotIn("Training completed", out)
        self.assertEqual(err, "")


@unittest.skipUnless(RECIPES and os.path.isdir(RECIPES), "ATTUNE_CORPUS is not set")
class CorpusA(Case):
    """Each corpus TOML under v0.2.2, launched as multinode_trainer.slurm does
    (torchrun -m torchtitan.train --job.config_file F), on one node of 8: all
    six start; the layouts that need 8 ranks are refused on 4."""

    def test_corpus_tomls(self):
        def run(name, extra=(), nproc=8):
            return (A, ["--job.config_file", os.path.join(RECIPES, name + ".toml"), "--training.steps", "20"]
                    + list(extra), nproc)

        res = self.torchrun_many({
            "llama3_8b": run("llama3_8b"), "llama3_70b": run("llama3_70b"), "llama3_405b": run("llama3_405b"),
            "deepseek_v3_16b": run("deepseek_v3_16b", ["--checkpoint.enable"]),
            "deepseek_v3_671b": run("deepseek_v3_671b"), "llama4_17bx16e": run("llama4_17bx16e"),
            "llama3_70b_on_4": run("llama3_70b", nproc=4)})
        for name in ("llama3_8b", "llama3_70b", "llama3_405b", "deepseek_v3_16b", "deepseek_v3_671b",
                     "llama4_17bx16e"):
            with self.subTest(recipe=name):
                self.assertTrained(res[name][0], 20, 10)
        r, cwd = res["llama3_8b"]
        self.assertIn("Starting job: Llama 3 8B training", r.stdout)
        self.assertIn("Profiling active. Traces will be saved at ./outputs/profile_trace", r.stdout)
        self.assertTrue(os.path.isdir(os.path.join(cwd, "outputs", "tb")))
        r = res["llama3_405b"][0]
        self.assertIn("Applied Float8 tensorwise Tensor Parallelism to the model", r.stdout)
        self.assertIn("Async TP is enabled", r.stdout)
        r, cwd = res["deepseek_v3_16b"]
        self.assertIn("Successfully created meshes with active dimensions: ['batch', 'loss', 'fsdp', 'ep']", r.stdout)
        self.assertTrue(os.path.isfile(os.path.join(cwd, "outputs", "checkpoint", "step-10", ".metadata")))
        self.assertIn("Starting job: Llama 4 Scout 17Bx16E training", res["llama4_17bx16e"][0].stdout)
        r = res["llama3_70b_on_4"][0]
        self.assertEqual(r.returncode, 1)
        self.assertIn("    assert dp_shard >= 1\nAssertionError\n", r.stderr)


class GenerationB(Case):
    """main (b5bcd76): --module M --config C, overrides on the config function's values."""

    def test_llama3_8b_runs(self):
        r = self.torchrun(B, ["--module", "llama3", "--config", "llama3_8b", "--training.steps", "20"])
        self.assertTrained(r, 20, 10)
        self.assertEqual(r.stdout.count("Training completed"), 8)  # every rank in B
        self.assertIn("Building llama3 8B", r.stdout)
        self.assertIn("Trainer is initialized with 8192 tokens per DP rank, 65536 tokens per train step, gradient "
                      "accumulation steps 1, maximum context length 8192, total steps 20 (warmup 200)", r.stdout)
        self.assertNotIn("Starting job", r.stdout)

    def test_toml_flag_is_refused(self):
        r = self.python(B, ["--job.config_file", os.path.join(FIXTURES, "small.toml")])
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.rstrip().endswith(
            "ValueError: --module is required. Example: --module llama3 --config llama3_debugmodel"))
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "--job.config_file", "x.toml"],
                        extra={"COLUMNS": "200"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("Unrecognized options: --job.config_file, x.toml", r.stderr)
        self.assertIn("Available subcommands: activation-checkpoint:selective, activation-checkpoint:full, "
                      "activation-checkpoint:memory-budget, activation-checkpoint:none", r.stderr)

    def test_unknown_module_and_config(self):
        r = self.python(B, ["--module", "llama4", "--config", "llama4_17bx16e"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ImportError: Cannot import module 'llama4' or 'llama4.config_registry'. For shorthands, "
                      "supported modules are: ['alphabet_sort', ", r.stderr)
        r = self.python(B, ["--module", "llama3", "--config", "llama3_9b"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: Config function 'llama3_9b' not found in torchtitan.models.llama3.config_registry. "
                      "Available config functions: ['cast', 'decoder_vocab_size', ", r.stderr)

    def test_subcommand_and_misplaced_flag(self):
        r = self.torchrun(B, ["--module", "llama3", "--config", "llama3_8b", "--training.steps", "10",
                              "activation-checkpoint:full"], nproc=2)
        self.assertTrained(r, 10, 10, ranks=2)
        self.assertIn("Applied FullAC activation checkpointing to the model", r.stdout)
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "activation-checkpoint:none",
                            "--training.steps", "10"], extra={"COLUMNS": "200"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("Unrecognized or misplaced options:", r.stderr)
        self.assertIn("  --training.steps (applied to {} activation-checkpoint:none)".format(self.prog()), r.stderr)

    def test_config_checks(self):
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "--metrics.log_freq", "0"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("Error parsing metrics: metrics.log_freq must be greater than 0.", r.stderr)
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "--parallelism.pipeline_parallel_degree",
                            "2"])
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.rstrip().endswith("ValueError: CUDA graphs do not support pipeline parallelism yet. "
                                                   "Set --training.disable_cuda_graphs."))
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "--optimizer.lr", "1e-4"])
        self.assertEqual(r.returncode, 2)

    def test_help_exits_0(self):
        r = self.python(B, ["--module", "llama3", "--config", "llama3_8b", "--help"])
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: ", r.stdout)


@unittest.skipUnless(RECIPES and os.path.isdir(RECIPES), "ATTUNE_CORPUS is not set")
class CorpusB(Case):
    """The corpus TOMLs' equivalents under main: their config functions, with
    the corpus launch's overrides; llama4 is gone from main."""

    def test_toml_launch_is_refused_by_main(self):
        r = self.python(B, ["--job.config_file", os.path.join(RECIPES, "llama3_8b.toml")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("--module is required", r.stderr)
        r = self.python(B, ["--module", "llama4", "--config", "llama4_17bx16e"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ImportError: Cannot import module 'llama4'", r.stderr)

    def test_config_functions(self):
        def run(module, config, extra=(), nproc=8):
            return (B, ["--module", module, "--config", config, "--training.steps", "20"] + list(extra), nproc)

        res = self.torchrun_many({
            "llama3_8b": run("llama3", "llama3_8b"), "llama3_70b": run("llama3", "llama3_70b"),
            "llama3_405b": run("llama3", "llama3_405b"),
            "deepseek_v3_16b": run("deepseek_v3", "deepseek_v3_16b", ["--checkpoint.enable"]),
            "deepseek_v3_671b": run("deepseek_v3", "deepseek_v3_671b"),
            "deepseek_v3_16b_on_4": run("deepseek_v3", "deepseek_v3_16b", nproc=4)})
        for name in ("llama3_8b", "llama3_70b", "llama3_405b", "deepseek_v3_16b", "deepseek_v3_671b"):
            with self.subTest(config=name):
                r = res[name][0]
                self.assertTrained(r, 20, 10)
                mfu = [ANSI.sub("", l).rsplit("mfu: ", 1)[1] for l in r.stdout.splitlines() if "mfu: " in l]
                self.assertTrue(all(m == "N/A" for m in mfu) if name == "llama3_405b" else
                                all(m.endswith("%") for m in mfu))
        r = res["deepseek_v3_16b"][0]
        self.assertIn("Saving the checkpoint.", r.stdout)
        self.assertIn("Last step checkpoint completed in ", r.stdout)
        r = res["deepseek_v3_16b_on_4"][0]
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: expert_parallel_degree (8) must divide dp_shard * cp * tp (4)", r.stderr)


if __name__ == "__main__":
    unittest.main()
