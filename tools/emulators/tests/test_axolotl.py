"""The axolotl emulator (attune_emulators/axolotl.py), run as a process the way
a job runs it: `axolotl train CONFIG --launcher torchrun -- ...` (which execs
torchrun), `torchrun --nproc-per-node N --standalone -m axolotl.cli.train
CONFIG` (what that exec runs), `python -m axolotl.cli.train CONFIG` and
`axolotl preprocess CONFIG`.

Run: cd tools/emulators && /usr/bin/python3 -m unittest tests.test_axolotl -v
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.path.dirname(HERE), "bin")
FIXTURES = os.path.join(HERE, "fixtures", "axolotl")
CORPUS = os.environ.get("ATTUNE_CORPUS", "")
RECIPES = os.path.join(CORPUS, "recipes", "axolotl") if CORPUS else ""

_CLEAN = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR",
          "MASTER_PORT", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS", "SLURM_PROCID", "GLOBAL_RANK",
          "AXOLOTL_DO_NOT_TRACK", "DO_NOT_TRACK", "HF_HUB_OFFLINE", "PYTORCH_ALLOC_CONF", "HF_HOME",
          "XDG_CACHE_HOME")
LOG = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[(INFO|WARNING|ERROR)\] \[([\w.]+)\]( \[RANK:\d+\])? ")
STEP_DICT = re.compile(r"^\{'loss': '[^']+', 'grad_norm': '[^']+', 'learning_rate': '[^']+', 'ppl': '[^']+', "
                       r"'memory/max_active \(GiB\)': '[^']+', 'memory/max_allocated \(GiB\)': '[^']+', "
                       r"'memory/device_reserved \(GiB\)': '[^']+', (?:'tokens/train_per_sec_per_gpu': '[^']+', )?"
                       r"'tokens/trainable': \d+, 'tokens/total': \d+, 'epoch': '[^']+'\}$")
BAR = re.compile(r"^ *(\d+)%\|[^|]*\| (\d+)/(\d+) \[[\d:]+<[\d:?]+, +(?:[\d.]+s/it|[\d.]+it/s|\?it/s)\]$")


def _env(extra=None, path_first=True):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ATTUNE_EMULATE_") and not k.startswith("PET_") and k not in _CLEAN}
    env["ATTUNE_EMULATE_TIME_SCALE"] = "100000"
    env["HOME"] = tempfile.gettempdir()  # no ~/.cache/huggingface/accelerate/default_config.yaml
    if path_first:
        env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env.update(extra or {})
    return env


def _segments(text):
    """Stdout and stderr lines, split at tqdm's carriage returns as well."""
    out = []
    for line in text.split("\n"):
        out.extend(s for s in line.split("\r"))
    return out


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="axolotl-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def fixture(self, name):
        return os.path.join(FIXTURES, name)

    def run_cmd(self, cmd, extra=None, timeout=60, cwd=None, path_first=True):
        return subprocess.run(cmd, cwd=cwd or self.dir, env=_env(extra, path_first), capture_output=True, text=True,
                              timeout=timeout)

    def torchrun(self, config, args=(), nproc=2, **kw):
        return self.run_cmd([os.path.join(BIN, "torchrun"), "--nproc-per-node", str(nproc), "--standalone", "-m",
                             "axolotl.cli.train", config] + list(args), **kw)

    def python(self, config, args=(), module="axolotl.cli.train", **kw):
        return self.run_cmd([os.path.join(BIN, "python"), "-m", module, config] + list(args), **kw)

    def axolotl(self, args, **kw):
        return self.run_cmd([os.path.join(BIN, "axolotl")] + list(args), **kw)

    def step_dicts(self, stdout):
        return [s for s in _segments(stdout) if s.startswith("{'loss'")]

    def assertOk(self, r):
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])

    def out_dir(self, *parts):
        return os.path.join(self.dir, *parts)


class TestTraining(Case):
    def test_step_lines_at_logging_steps_from_rank_zero_only(self):
        r = self.torchrun(self.fixture("sft.yml"), nproc=2)
        self.assertOk(r)
        dicts = self.step_dicts(r.stdout)
        self.assertEqual(len(dicts), 3, dicts)  # max_steps 6, logging_steps 2, world rank 0 only
        for d in dicts:
            self.assertRegex(d, STEP_DICT)
        self.assertNotIn("tokens/train_per_sec_per_gpu", dicts[0])  # no previous window at the first log
        self.assertIn("tokens/train_per_sec_per_gpu", dicts[1])
        self.assertIn("'epoch': ", dicts[2])
        # the bar: world rank 0 only, on stderr, a position per step
        bars = [BAR.match(s) for s in _segments(r.stderr)]
        positions = [int(m.group(2)) for m in bars if m]
        self.assertEqual(sorted(set(positions)), [0, 1, 2, 3, 4, 5, 6])
        self.assertTrue(all(int(m.group(3)) == 6 for m in bars if m))
        # axolotl's own lines: main process only, with the logger's format
        lines = [s for s in r.stdout.split("\n") if LOG.match(s)]
        self.assertEqual(sum("Starting trainer..." in s for s in lines), 1)
        self.assertEqual(sum("Maximum number of steps set at 6" in s for s in lines), 1)
        ranked = [s for s in lines if "[RANK:" in s]
        self.assertTrue(all("Loading raw datasets..." in s for s in ranked), ranked)
        summary = [s for s in _segments(r.stdout) if s.startswith("{'train_runtime'")]
        self.assertEqual(len(summary), 1)
        self.assertRegex(summary[0], r"^\{'train_runtime': '[\d.]+', 'train_samples_per_second': '[\d.]+', "
                                     r"'train_steps_per_second': '[\d.]+', 'train_loss': '[\d.]+', "
                                     r"'memory/max_active \(GiB\)': '40', 'memory/max_allocated \(GiB\)': '40', "
                                     r"'memory/device_reserved \(GiB\)': '40', 'epoch': '[\d.e-]+'\}$")
        self.assertIn("Model successfully saved to ./outputs/sft", r.stdout)
        self.assertTrue(os.path.isfile(self.out_dir("outputs", "sft", "model.safetensors")))

    def test_logging_steps_default_from_total_steps(self):
        # logging_steps unset: max(min(int(0.005 * 400), 10), 1) = 2
        r = self.python(self.fixture("sft.yml"), ["--logging_steps", "None", "--max_steps", "400",
                                                  "--save_steps", "1000"])
        self.assertOk(r)
        self.assertEqual(len(self.step_dicts(r.stdout)), 200)

    def test_fire_overrides_dash_and_underscore(self):
        r = self.python(self.fixture("sft.yml"), ["--micro_batch_size", "4", "--gradient-accumulation-steps=1",
                                                  "--max_steps=2", "--bogus_key", "1"])
        self.assertOk(r)
        self.assertIn('"micro_batch_size": 4,', r.stdout)
        self.assertIn('"gradient_accumulation_steps": 1,', r.stdout)
        self.assertNotIn("bogus_key", r.stdout)  # unknown keys are dropped by validation, silently
        self.assertEqual(len(self.step_dicts(r.stdout)), 1)

    def test_oom_fails_every_rank(self):
        pred = os.path.join(self.dir, "pred.json")
        with open(pred, "w") as f:
            json.dump({"step_time_s": 2.0, "failure": "oom", "error": "out of memory", "fails_at_step": 3,
                       "memory": {"hbm_gib": 80.0, "peak_allocated_gib": 90.0}}, f)
        r = self.torchrun(self.fixture("sft.yml"), nproc=2, extra={"ATTUNE_EMULATE_PREDICTION": pred})
        self.assertEqual(r.returncode, 1)
        self.assertIn("torch.OutOfMemoryError: CUDA out of memory.", r.stderr)
        self.assertIn("ChildFailedError", r.stderr)
        self.assertEqual(len(self.step_dicts(r.stdout)), 1)  # step 2 was logged, step 3 failed


class TestValidation(Case):
    def test_float_into_int_field(self):
        r = self.python(self.fixture("sft.yml"), ["--warmup_steps", "0.1"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("pydantic_core._pydantic_core.ValidationError: 1 validation error for AxolotlConfigWCapabilities\n"
                      "warmup_steps\n  Input should be a valid integer, got a number with a fractional part "
                      "[type=int_from_float, input_value=0.1, input_type=float]\n"
                      "    For further information visit https://errors.pydantic.dev/2.12/v/int_from_float",
                      r.stderr)
        self.assertIn("[ERROR] [axolotl.telemetry.errors] Error captured in telemetry. Run ID: ", r.stdout)

    def test_learning_rate_strings(self):
        r = self.python(self.fixture("sft.yml"), ["--max_steps", "2"])
        self.assertOk(r)
        self.assertIn('"learning_rate": 2e-05,', r.stdout)  # YAML 1.1 reads 2e-5 as a string
        r = self.python(self.fixture("sft.yml"), ["--learning_rate", "abc"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("learning_rate\n  Value error, could not convert string to float: 'abc' [type=value_error, "
                      "input_value='abc', input_type=str]", r.stderr)

    def test_required_fields_and_datasets(self):
        r = self.python(self.fixture("no_model.yml"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("1 validation error for AxolotlConfigWCapabilities\n  Value error, either datasets or "
                      "pretraining_dataset is required [type=value_error, input_value={", r.stderr)
        r = self.python(self.fixture("no_model.yml"), ["--datasets", "[{'path':'x','type':'alpaca'}]"],
                        extra={"AXOLOTL_DO_NOT_TRACK": "1"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("1 validation error for AxolotlConfigWCapabilities\nbase_model\n  Field required "
                      "[type=missing, input_value={", r.stderr)
        self.assertNotIn("Error captured in telemetry", r.stdout)

    def test_mutually_exclusive_saves(self):
        r = self.python(self.fixture("sft.yml"), ["--saves_per_epoch", "2"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("Value error, save_steps and saves_per_epoch are mutually exclusive and cannot be used "
                      "together. [type=value_error", r.stderr)

    def test_missing_and_broken_config(self):
        r = self.python("missing.yml")
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.rstrip().endswith(
            "FileNotFoundError: [Errno 2] No such file or directory: 'missing.yml'"), r.stderr)


class TestWorldSize(Case):
    def test_parallel_degrees_against_world(self):
        # utils/distributed.py _get_parallel_config_kwargs, then the mesh and accelerate's size check
        ok = self.torchrun(self.fixture("nd_parallel.yml"), nproc=8)
        self.assertOk(ok)
        bigger = self.torchrun(self.fixture("nd_parallel.yml"), nproc=2)
        self.assertEqual(bigger.returncode, 1)
        self.assertIn("RuntimeError: Mesh should not be bigger than default world size 2, but found 4 ranks!",
                      bigger.stderr)
        smaller = self.torchrun(self.fixture("nd_parallel.yml"), ["--dp_shard_size", "None",
                                                                   "--dp_replicate_size", "None"], nproc=3)
        self.assertEqual(smaller.returncode, 1)
        self.assertIn("ValueError: ParallelismConfig total_size (2) does not match num_processes (3).", smaller.stderr)
        incompatible = self.torchrun(self.fixture("nd_parallel.yml"), nproc=16)
        self.assertEqual(incompatible.returncode, 1)
        self.assertIn("ValueError: The configured parallelisms are incompatible with the current world size (16)!\n"
                      "{'tp_size': 2, 'dp_replicate_size': 2, 'dp_shard_size': 2}", incompatible.stderr)

    def test_dp_shard_without_fsdp(self):
        r = self.torchrun(self.fixture("sft.yml"), ["--dp_shard_size", "2", "--tensor_parallel_size", "2"], nproc=8)
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: dp_shard_size was configured without a corresponding fsdp_config! Please ensure "
                      "you have configured FSDP using fsdp_config.", r.stderr)


class TestConsoleScript(Case):
    def test_train_launcher_torchrun_execs_torchrun(self):
        r = self.axolotl(["train", self.fixture("sft.yml"), "--launcher", "torchrun", "--max-steps", "4", "--",
                          "--nproc-per-node", "2", "--standalone"])
        self.assertOk(r)
        self.assertEqual(r.stdout.count("#@@ #@@      @@# @@#"), 1)  # the logo, from the axolotl process
        self.assertEqual(len(self.step_dicts(r.stdout)), 2)

    def test_default_launcher_is_accelerate(self):
        # accelerate launch is what the default runs; no accelerate on this PATH: os.execvpe fails
        r = self.axolotl(["train", self.fixture("sft.yml")], extra={"PATH": BIN + os.pathsep + "/nonexistent"},
                         path_first=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('axolotl/cli/utils/train.py", line 190, in _launch_accelerate_training', r.stderr)
        self.assertIn("FileNotFoundError: [Errno 2] No such file or directory", r.stderr)

    def test_usage_errors(self):
        r = self.axolotl(["trian", "c.yml"])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "Usage: axolotl [OPTIONS] COMMAND [ARGS]...\nTry 'axolotl --help' for help.\n\n"
                                   "Error: No such command 'trian'. Did you mean 'train'?\n")
        r = self.axolotl(["train", "missing.yml"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("#@@", r.stdout)
        self.assertEqual(r.stderr, "Usage: axolotl train [OPTIONS] CONFIG\nTry 'axolotl train --help' for help.\n\n"
                                   "Error: Invalid value for 'CONFIG': Path 'missing.yml' does not exist.\n")
        r = self.axolotl(["train", self.fixture("sft.yml"), "--launcher", "srun"])
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.endswith("Error: Invalid value for '--launcher': 'srun' is not one of 'accelerate', "
                                          "'torchrun', 'python'.\n"))
        r = self.axolotl(["preprocess", self.fixture("sft.yml"), "--micro_batch_size", "2"])
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.endswith("Error: No such option '--micro_batch_size'. (Did you mean one of: "
                                          "'--batch-size', '--eval-batch-size', '--micro-batch-size'?)\n"), r.stderr)
        r = self.axolotl(["--version"])
        self.assertEqual((r.returncode, r.stdout), (0, "axolotl, version 0.18.0\n"))


class TestPreprocessAndCheckpoints(Case):
    def test_preprocess_then_train_loads_prepared(self):
        r = self.axolotl(["preprocess", self.fixture("sft.yml")])
        self.assertOk(r)
        self.assertIn("Success! Preprocessed data path: `dataset_prepared_path: last_run_prepared`", r.stdout)
        hashes = [n for n in os.listdir(self.out_dir("last_run_prepared")) if len(n) == 32]
        self.assertEqual(len(hashes), 1)
        r = self.torchrun(self.fixture("sft.yml"), nproc=2)
        self.assertOk(r)
        self.assertIn("Loading prepared dataset from disk at last_run_prepared/{}...".format(hashes[0]), r.stdout)
        self.assertNotIn("Processing datasets during training", r.stdout)

    def test_train_without_prepared_data_warns_and_caches(self):
        r = self.python(self.fixture("sft.yml"), ["--max_steps", "1"])
        self.assertOk(r)
        self.assertIn("[WARNING] [axolotl.utils.data.sft] Processing datasets during training can lead to VRAM "
                      "instability. Please pre-process your dataset using `axolotl preprocess path/to/config.yml`.",
                      r.stdout)
        r = self.python(self.fixture("sft.yml"), ["--max_steps", "1"])
        self.assertIn("Loading prepared dataset from disk at last_run_prepared/", r.stdout)

    def test_save_steps_rotation_and_resume(self):
        r = self.torchrun(self.fixture("sft.yml"), ["--max_steps", "10", "--save_steps", "2",
                                                    "--save_total_limit", "2"], nproc=2)
        self.assertOk(r)
        out = self.out_dir("outputs", "sft")
        ckpts = sorted(n for n in os.listdir(out) if n.startswith("checkpoint-"))
        self.assertEqual(ckpts, ["checkpoint-10", "checkpoint-8"])
        for name in ("trainer_state.json", "tokens_state.json", "model.safetensors", "rng_state_0.pth",
                     "rng_state_1.pth"):
            self.assertTrue(os.path.isfile(os.path.join(out, "checkpoint-10", name)), name)
        self.assertIn("Saving model checkpoint to ./outputs/sft/checkpoint-10", r.stdout)
        r = self.torchrun(self.fixture("sft.yml"), ["--max_steps", "14", "--save_steps", "2",
                                                    "--auto_resume_from_checkpoints", "True"], nproc=2)
        self.assertOk(r)
        self.assertIn("Using auto-resume functionality to resume from checkpoint at outputs/sft/checkpoint-10",
                      r.stdout)
        self.assertEqual(len(self.step_dicts(r.stdout)), 2)  # steps 12 and 14
        r = self.python(self.fixture("sft.yml"), ["--resume_from_checkpoint", "outputs/sft/checkpoint-3"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("ValueError: Can't find a valid checkpoint at outputs/sft/checkpoint-3", r.stderr)


class TestSignals(Case):
    def start(self, cmd, marker=b"Starting trainer...", scale="1000"):
        log = open(os.path.join(self.dir, "log.txt"), "wb")
        self.addCleanup(log.close)
        p = subprocess.Popen(cmd, cwd=self.dir, env=_env({"ATTUNE_EMULATE_TIME_SCALE": scale}), stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(os.path.join(self.dir, "log.txt"), "rb") as f:
                if marker in f.read():
                    break
            time.sleep(0.05)
        time.sleep(0.3)
        return p

    def test_sigterm_kills_without_save(self):
        p = self.start([os.path.join(BIN, "python"), "-m", "axolotl.cli.train", self.fixture("sft.yml"),
                        "--max_steps", "100000"])
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=10), -signal.SIGTERM)
        out = self.out_dir("outputs", "sft")
        self.assertFalse(os.path.exists(os.path.join(out, "model.safetensors")))

    def test_sigterm_under_torchrun(self):
        p = self.start([os.path.join(BIN, "torchrun"), "--nproc-per-node", "2", "--standalone", "-m",
                        "axolotl.cli.train", self.fixture("sft.yml"), "--max_steps", "100000"])
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=40), 1)
        self.assertFalse(os.path.exists(self.out_dir("outputs", "sft", "model.safetensors")))

    def test_sigint_on_local_rank_zero_saves_and_exits_zero(self):
        p = self.start([os.path.join(BIN, "python"), "-m", "axolotl.cli.train", self.fixture("sft.yml"),
                        "--max_steps", "100000"])
        p.send_signal(signal.SIGINT)
        self.assertEqual(p.wait(timeout=10), 0)
        self.assertTrue(os.path.isfile(self.out_dir("outputs", "sft", "model.safetensors")))


@unittest.skipUnless(CORPUS, "ATTUNE_CORPUS is not set")
class TestCorpus(Case):
    """Each recipe of the corpus at the GPU count it is written for, as
    `torchrun --nproc-per-node N --standalone -m axolotl.cli.train RECIPE`
    (--max_steps keeps the runs short; it is an override the entry point takes)."""

    RUNS = {
        "fft-8b-liger-fsdp": (2, 0, None),
        "gpt-oss-20b-fft-fsdp2": (8, 0, None),
        "llama-3_1-8b-hsdp-tp": (16, 0, None),
        "llama-3_1-8b-hsdp-tp@8": (8, 1, "RuntimeError: Mesh should not be bigger than default world size 8, but "
                                          "found 16 ranks!"),
        "llama3-8b-fsdp2-alst": (8, 0, None),
        "qlora-fsdp-70b": (2, 0, None),
        "qwen3-8b-fsdp-tp-cp": (8, 0, None),
        "qwen3_30ba3b_ep_fsdp_fft_4gpu": (4, 1, "warmup_steps\n  Input should be a valid integer, got a number with "
                                                "a fractional part [type=int_from_float, input_value=0.1, "
                                                "input_type=float]"),
    }

    WARNINGS = {
        "fft-8b-liger-fsdp": ("Configuring FSDP fields with the `fsdp_` prefix is deprecated.", "FSDP1 is deprecated"),
        "qlora-fsdp-70b": ("FSDP1 is deprecated",),
        "gpt-oss-20b-fft-fsdp2": ("`sample_packing` with `attn_implementation='kernels-community/vllm-flash-attn3'` "
                                  "does not handle cross-sample decontamination.",),
        "llama3-8b-fsdp2-alst": ("Sequence parallelism (SP) is enabled with context_parallel_size=8.",),
        "qwen3-8b-fsdp-tp-cp": ("Sequence parallelism (SP) is enabled with context_parallel_size=2.",),
        "qwen3_30ba3b_ep_fsdp_fft_4gpu": ("`flash_attention: true` is deprecated and will be removed in a future "
                                          "release. Use `attn_implementation: flash_attention_2` instead.",),
    }

    def test_recipes(self):
        procs = {}
        for name, (nproc, _, _) in self.RUNS.items():
            recipe = name.split("@")[0]
            cwd = os.path.join(self.dir, name)
            os.makedirs(cwd)
            cmd = [os.path.join(BIN, "torchrun"), "--nproc-per-node", str(nproc), "--standalone", "-m",
                   "axolotl.cli.train", os.path.join(RECIPES, recipe + ".yaml"), "--max_steps", "2"]
            procs[name] = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                           text=True)
        for name, p in procs.items():
            stdout, stderr = p.communicate(timeout=120)
            nproc, code, message = self.RUNS[name]
            with self.subTest(recipe=name):
                self.assertEqual(p.returncode, code, stdout[-2000:] + stderr[-2000:])
                if code == 0:
                    self.assertEqual(len(self.step_dicts(stdout)), 2)
                    self.assertIn("Model successfully saved to", stdout)
                else:
                    self.assertIn(message, stderr)
                    self.assertIn("ChildFailedError", stderr)
                self.assertEqual(all(w in stdout for w in self.WARNINGS.get(name, ())), True, name)


if __name__ == "__main__":
    unittest.main()
