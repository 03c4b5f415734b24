"""The Megatron-Bridge emulator (attune_emulators/bridge.py), run as a process
the way a launch runs it: bin/python or bin/torchrun with the script's path in
a copy of the checkout stubs, ATTUNE_EMULATE_TIME_SCALE=100000 and no
ATTUNE_EMULATE_RECIPE (a fixed 1 s step)."""

import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.dirname(HERE)
BIN = os.path.join(EMU, "bin")
CHECKOUT = os.path.join(EMU, "checkouts", "megatron-bridge")
FIXTURES = os.path.join(HERE, "fixtures", "bridge")
CORPUS = os.environ.get("ATTUNE_CORPUS", "")

RUN_RECIPE = "scripts/training/run_recipe.py"
T00 = "tutorials/recipes/llama/00_quickstart_pretrain.py"
T01 = "tutorials/recipes/llama/01_quickstart_finetune.py"
T02 = "tutorials/recipes/llama/02_pretrain_with_yaml.py"
T03 = "tutorials/recipes/llama/03_finetune_with_yaml.py"
QUANT = "examples/quantization/pretrain_quantized_llama3_8b.py"
QWEN = "examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py"
EXAMPLE_ENTRIES = {QUANT: "quantized_pretrain_main", QWEN: "qwen3_next_finetune_main"}

# training_log's line (utils/train_utils.py:1088-1140 @067f987)
STEP_LINE = re.compile(
    r"^ \[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] iteration +(\d+)/ +(\d+) \| consumed samples: +(\d+) \| "
    r"elapsed time per iteration \(ms\): [0-9.]+ \| learning rate: [0-9.]+E[-+]\d\d \| global batch size: +(\d+) \| "
    r"lm loss: [0-9.]+E[-+]\d\d \| loss scale: 1\.0 \| grad norm: [0-9.]+ \| number of skipped iterations: +0 \| "
    r"number of nan iterations: +0 \|$", re.M)
STEP_TIME = re.compile(r"^Step Time : [0-9.]+s GPU utilization: [0-9.]+MODEL_TFLOP/s/GPU$", re.M)
USAGE = "usage: run_recipe.py [-h] (--model MODEL | --recipe RECIPE)"


def _example_registered(rel):
    sys.path.insert(0, EMU)
    try:
        from attune_emulators import entries
        return any(rel.endswith(suffix) for suffix, _ in entries.SCRIPTS)
    finally:
        sys.path.remove(EMU)


class BridgeCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="attune-bridge-")
        self.root = os.path.join(self.tmp, "Megatron-Bridge")
        shutil.copytree(CHECKOUT, self.root)
        self.work = os.path.join(self.tmp, "work")
        os.makedirs(self.work)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTUNE_EMULATE_", "PET_", "SLURM_"))}
        for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "TORCHELASTIC_RUN_ID"):
            env.pop(k, None)
        env["ATTUNE_EMULATE_TIME_SCALE"] = "100000"
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def command(self, rel, args, nproc=None):
        script = os.path.join(self.root, rel)
        if nproc:
            # a port of its own: concurrent launches on one machine must not share a rendezvous
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            return [os.path.join(BIN, "torchrun"), "--nproc_per_node={}".format(nproc),
                    "--master_port={}".format(port), script] + list(args)
        if rel in EXAMPLE_ENTRIES and not _example_registered(rel):
            # entries.SCRIPTS does not name the example scripts yet: the same dispatch, registered here
            code = ("import sys; sys.path.insert(0, {!r}); from attune_emulators import entries, python_cli; "
                    "entries.SCRIPTS.append(({!r}, ('bridge', {!r}))); sys.exit(python_cli.main())").format(
                        EMU, rel, EXAMPLE_ENTRIES[rel])
            return ["/usr/bin/python3", "-c", code, script] + list(args)
        return [os.path.join(BIN, "python"), script] + list(args)

    def run_entry(self, rel, *args, nproc=None, cwd=None, timeout=60, **env):
        p = subprocess.run(self.command(rel, args, nproc), cwd=cwd or self.work, env=self.env(**env),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def path(self, *parts):
        return os.path.join(self.work, *parts)


class RunRecipeArgs(BridgeCase):
    """scripts/training/run_recipe.py's parser: allow_abbrev=False, --model/--recipe required and exclusive,
    leftovers only KEY=VALUE (run_recipe.py:160-272)."""

    def assert_usage_error(self, args, last_line):
        rc, out, err = self.run_entry(RUN_RECIPE, *args)
        self.assertEqual(rc, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(lines[0], USAGE)
        self.assertEqual(lines[-1], last_line)
        self.assertNotIn("iteration", out)

    def test_selection_is_required(self):
        self.assert_usage_error(["--config-file", "x.yaml"],
                                "run_recipe.py: error: one of the arguments --model --recipe is required")

    def test_no_yaml_option(self):
        self.assert_usage_error(["--recipe", "llama32_1b_pretrain_config", "--config-file", "x.yaml"],
                                "run_recipe.py: error: Unknown option: --config-file")

    def test_no_abbreviations(self):
        self.assert_usage_error(["--recipe", "llama32_1b_pretrain_config", "--step", "gpt_step"],
                                "run_recipe.py: error: Unknown option: --step")

    def test_overrides_must_be_key_value(self):
        self.assert_usage_error(["--recipe", "llama32_1b_pretrain_config", "foo"],
                                "run_recipe.py: error: Expected override in KEY=VALUE form, got 'foo'")

    def test_model_and_recipe_exclusive(self):
        self.assert_usage_error(["--recipe", "a", "--model", "b"],
                                "run_recipe.py: error: argument --model: not allowed with argument --recipe")

    def test_mode_choices(self):
        self.assert_usage_error(["--recipe", "a", "--mode", "train"],
                                "run_recipe.py: error: argument --mode: invalid choice: 'train' "
                                "(choose from 'pretrain', 'sft', 'lora', 'dora')")

    def test_recipe_resolution_errors(self):
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "llama99_pretrain_config")
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("AttributeError: Recipe 'llama99_pretrain_config' not found in "
                                              "megatron.bridge.recipes or megatron.bridge.perf_recipes."), err)
        rc, out, err = self.run_entry(RUN_RECIPE, "--model", "llama32_1b")
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("ValueError: Unable to infer training mode; pass --mode or use a "
                                              "conventional --recipe name."), err)
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "llama32_1b_pretrain_config", "--mode", "sft")
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("ValueError: Mode 'sft' is incompatible with recipe "
                                              "'llama32_1b_pretrain_config'."), err)

    def test_struct_overrides(self):
        # llama recipes hold a BridgeGPTModelConfig: its parallel sizes live under model.transformer, so the flat
        # key does not exist in the struct-mode OmegaConf tree (omegaconf_utils.py:163-186, 230-346)
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "llama32_1b_pretrain_config", "-tp", "2")
        self.assertEqual(rc, 1)
        self.assertIn("\nThe above exception was the direct cause of the following exception:\n", err)
        self.assertTrue(err.rstrip().endswith(
            "megatron.bridge.training.utils.omegaconf_utils.OverridesError: Failed to parse Hydra overrides: Could not "
            "override 'model.tensor_model_parallel_size'.\nTo append to your config use "
            "+model.tensor_model_parallel_size=2"), err)
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "llama32_1b_pretrain_config", "train.not_a_key=1")
        self.assertEqual(rc, 1)
        self.assertIn("Could not override 'train.not_a_key'.\nTo append to your config use +train.not_a_key=1", err)
        # ++ adds the key; applied back through the proxy it sets the transformer's field
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "llama32_1b_pretrain_config", "--dry-run",
                                      "++model.tensor_model_parallel_size=2", "logger.save_config_filepath=cfg.yaml")
        self.assertEqual(rc, 0, err)
        saved = os.path.join(self.root, "cfg.yaml")  # run_recipe chdirs to the checkout root
        self.assertIn("INFO:recipe_runner:ConfigContainer saved to: " + saved, out)
        import yaml
        with open(saved) as f:
            self.assertEqual(yaml.safe_load(f)["model"]["transformer"]["tensor_model_parallel_size"], 2)


class RunRecipeTraining(BridgeCase):
    def test_torchrun_steps_checkpoints_and_resume(self):
        ck = self.path("ck")
        args = ["--recipe", "vanilla_gpt_pretrain_config", "--dataset", "mock", "-ms", "20", "-gb", "8", "-mb", "1",
                "--save_dir", ck, "--load_dir", ck, "--save_interval", "10", "model.tensor_model_parallel_size=2",
                "model.sequence_parallel=true", "model.num_layers=2"]
        rc, out, err = self.run_entry(RUN_RECIPE, *args, nproc=4)
        self.assertEqual(rc, 0, err)
        steps = [int(m.group(1)) for m in STEP_LINE.finditer(out)]
        self.assertEqual(steps, [10, 20])  # logger.log_interval=10 (vanilla_gpt.py), once, from the last rank
        self.assertEqual(len(STEP_TIME.findall(out)), 2)  # rank 0
        self.assertIn("iteration       20/      20 | consumed samples:          160 |", out)
        self.assertEqual(out.count("INFO:recipe_runner:Loading library recipe 'vanilla_gpt_pretrain_config' from "
                                   "megatron.bridge.recipes"), 4)
        self.assertIn("> initialized tensor model parallel with size 2", out)
        self.assertEqual(sorted(os.listdir(ck)), ["iter_0000010", "iter_0000020", "latest_checkpointed_iteration.txt",
                                                  "latest_train_state.pt"])
        with open(os.path.join(ck, "latest_checkpointed_iteration.txt")) as f:
            self.assertEqual(f.read(), "20")
        for name in (".metadata", "common.pt", "metadata.json", "run_config.yaml", "train_state.pt"):
            self.assertTrue(os.path.exists(os.path.join(ck, "iter_0000020", name)), name)
        self.assertIn("  successfully saved checkpoint from iteration      20 to {} [ t 1/2, p 1/1 ]".format(ck), out)
        # resume: loads iteration 20 and trains up to 30
        rc, out, err = self.run_entry(RUN_RECIPE, *(args[:5] + ["30"] + args[6:]), nproc=2)
        self.assertEqual(rc, 0, err)
        self.assertIn(" loading distributed checkpoint from {} at iteration 20".format(ck), out)
        self.assertIn("  successfully loaded checkpoint from {} [ t 0/2, p 0/1 ] at iteration 20".format(ck), out)
        self.assertIn("Starting training loop at iteration 20", out)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out)], [30], out + err)

    def test_layout_assertions(self):
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "vanilla_gpt_pretrain_config",
                                      "model.tensor_model_parallel_size=2", WORLD_SIZE=3, RANK=0)
        self.assertEqual(rc, 1)
        self.assertIn("AssertionError: \n        world size (3) is not divisible by total_model_size "
                      "(model_cfg.tensor_model_parallel_size=2 * model_cfg.pipeline_model_parallel_size=1 * "
                      "model_cfg.context_parallel_size=1)\n        \n", err + "\n")
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "vanilla_gpt_pretrain_config", "-gb", "6", "-mb", "2",
                                      WORLD_SIZE=2, RANK=1)
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith(
            "AssertionError: eval_global_batch_size (6) must be divisible by eval_micro_batch_size * "
            "eval_data_parallel_size (2 * 2 = 4)"), err)
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "vanilla_gpt_pretrain_config",
                                      "model.sequence_parallel=true")
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("ValueError: Cannot use sequence parallelism without tensor "
                                              "parallelism"), err)

    def test_oom_from_the_prediction(self):
        pred = self.path("pred.json")
        with open(pred, "w") as f:
            json.dump({"step_time_s": 2.0, "failure": "oom", "error": "x", "fails_at_step": 3,
                       "memory": {"hbm_gib": 80.0, "peak_allocated_gib": 90.0, "peak_reserved_gib": 92.0}}, f)
        rc, out, err = self.run_entry(RUN_RECIPE, "--recipe", "vanilla_gpt_pretrain_config", "logger.log_interval=1",
                                      "checkpoint.save=null", ATTUNE_EMULATE_PREDICTION=pred)
        self.assertEqual(rc, 1)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out)], [1, 2])
        self.assertIn("ERROR:megatron.bridge.training.pretrain:Pretrain failed on rank=0 with OutOfMemoryError: CUDA "
                      "out of memory.", out)
        self.assertIn("\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate", err)


class Tutorials(BridgeCase):
    def test_rank_roles_and_yaml_run(self):
        """02_pretrain_with_yaml.py: the step line on the last rank, `Step Time` on rank 0, at logger.log_interval."""
        cfg = os.path.join(FIXTURES, "small_pretrain.yaml")
        rc, out1, err = self.run_entry(T02, "--config-file", cfg, "train.train_iters=10", "checkpoint.save=null",
                                       "checkpoint.load=null", WORLD_SIZE=2, RANK=1, LOCAL_RANK=1)
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out1)], [5, 10])
        self.assertEqual(STEP_TIME.findall(out1), [])
        self.assertIn(" validation loss at iteration 10 | lm loss value:", out1)
        rc, out0, err0 = self.run_entry(T02, "--config-file", cfg, "train.train_iters=10", "checkpoint.save=null",
                                        "checkpoint.load=null", WORLD_SIZE=2, RANK=0, LOCAL_RANK=0)
        self.assertEqual(rc, 0, err0)
        self.assertEqual(list(STEP_LINE.finditer(out0)), [])
        self.assertEqual(len(STEP_TIME.findall(out0)), 2)
        self.assertIn("Starting training loop at iteration 0", out0)
        self.assertIn("[after training is done] datetime: ", out0)
        self.assertIn("02_pretrain_with_yaml.py:101: UserWarning: Function 'pretrain' is experimental. APIs in this "
                      "module are subject to change without notice.", err0)
        self.assertNotIn("is experimental", err)  # rank 0 only
        for e in (err, err0):
            self.assertIn("UserWarning: TrainingConfig.eval_iters is deprecated and will be removed in a future "
                          "release. Use ValidationConfig.eval_iters instead.", e)

    def test_checkpoint_save_and_resume(self):
        cfg = os.path.join(FIXTURES, "small_pretrain.yaml")
        rc, out, err = self.run_entry(T02, "--config-file", cfg)
        self.assertEqual(rc, 0, err)
        self.assertIn("saving checkpoint at iteration      10 to ./ckpt in torch_dist format", out)
        self.assertEqual(sorted(d for d in os.listdir(self.path("ckpt")) if d.startswith("iter_")),
                         ["iter_0000010", "iter_0000020"])
        # resume at >= train_iters: the loop runs 0 steps, then the end-of-run evaluation
        rc, out, err = self.run_entry(T02, "--config-file", cfg)
        self.assertEqual(rc, 0, err)
        self.assertIn(" loading distributed checkpoint from ./ckpt at iteration 20", out)
        self.assertIn("Starting training loop at iteration 20", out)
        self.assertEqual(list(STEP_LINE.finditer(out)), [])
        self.assertNotIn("saving checkpoint", out)
        self.assertIn(" validation loss at iteration 20 on validation set |", out)
        # auto-resume then continue, and the final save at the last iteration (not a save_interval multiple)
        rc, out, err = self.run_entry(T02, "--config-file", cfg, "train.train_iters=25")
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out)], [25])
        self.assertIn("saving checkpoint at iteration      25 to ./ckpt in torch_dist format", out)

    def test_yaml_and_cli_errors(self):
        rc, out, err = self.run_entry(T02, "--config-file", os.path.join(FIXTURES, "unknown_key.yaml"))
        self.assertEqual(rc, 0, err)
        self.assertIn("WARNING:megatron.bridge.training.utils.omegaconf_utils:Key 'not_a_field' in overrides not found "
                      "in config object OptimizerConfig. Skipping.\n", out)
        rc, out, err = self.run_entry(T02, "--config-file", os.path.join(FIXTURES, "unknown_key.yaml"),
                                      "--pretrained-checkpoint", "/x")
        self.assertEqual(rc, 1)
        self.assertTrue(err.endswith(
            "megatron.bridge.training.utils.omegaconf_utils.OverridesError: Failed to parse Hydra overrides: "
            "LexerNoViableAltException: --pretrained-checkpoint\n" + " " * 27 + "^\n"
            "See https://hydra.cc/docs/1.2/advanced/override_grammar/basic for details\n"), err)
        rc, out, err = self.run_entry(T02)  # the default conf/llama32_1b_pretrain.yaml is not in the checkout
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("FileNotFoundError: Config file not found: {}".format(
            os.path.join(self.root, "tutorials/recipes/llama/conf/llama32_1b_pretrain.yaml"))), err)

    def test_argparse_of_01_and_03(self):
        rc, out, err = self.run_entry(T01)
        self.assertEqual(rc, 2)
        self.assertEqual(err.splitlines(), [
            "usage: 01_quickstart_finetune.py [-h] --pretrained-checkpoint",
            "                                 PRETRAINED_CHECKPOINT",
            "01_quickstart_finetune.py: error: the following arguments are required: --pretrained-checkpoint"])
        rc, out, err = self.run_entry(T03, "--peft", "foo")
        self.assertEqual(rc, 2)
        self.assertEqual(err.splitlines()[-1], "03_finetune_with_yaml.py: error: argument --peft: invalid choice: "
                                               "'foo' (choose from 'lora', 'dora', 'none')")
        rc, out, err = self.run_entry(T01, "--pretrained-checkpoint", "./nope")
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("AssertionError: Pretrained checkpoint ./nope does not exist"), err)

    def wait_for(self, proc, text, timeout=30):
        buf, end = "", time.time() + timeout
        while time.time() < end:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536).decode()
                if not chunk:
                    break
                buf += chunk
                if text in buf:
                    return buf
        self.fail("no {!r} in {!r}".format(text, buf[-2000:]))

    def start(self, *args, scale=2000):
        env = self.env(ATTUNE_EMULATE_TIME_SCALE=scale)
        return subprocess.Popen(self.command(T02, args), cwd=self.work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def test_sigterm(self):
        cfg = os.path.join(FIXTURES, "small_pretrain.yaml")
        # no handler by default (train.exit_signal_handler=False): the process dies of the signal
        p = self.start("--config-file", cfg, "train.train_iters=100000")
        self.wait_for(p, "Starting training loop at iteration 0")
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=30), -signal.SIGTERM)
        p.stdout.close()
        p.stderr.close()
        # with the handler: the step ends, a checkpoint is saved, the exit line, SystemExit(0) logged, exit 0
        p = self.start("--config-file", cfg, "train.train_iters=100000", "train.exit_signal_handler=true")
        buf = self.wait_for(p, "Starting training loop at iteration 0")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        out = buf + out.decode()
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("Received signal 15, initiating graceful stop", out)
        m = re.search(r"saving checkpoint at iteration +(\d+) to \./ckpt in torch_dist format\n", out.split(
            "Received signal 15")[1])
        self.assertTrue(m, out[-3000:])
        self.assertRegex(out, r"\[exiting program after receiving SIGTERM\.\] datetime: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \n")
        self.assertIn("ERROR:megatron.bridge.training.pretrain:Pretrain failed on rank=0 with SystemExit: 0. Bridge is "
                      "aborting framework-owned distributed resources because peer ranks may be blocked in "
                      "collectives.", out)
        with open(self.path("ckpt", "latest_checkpointed_iteration.txt")) as f:
            self.assertEqual(f.read(), m.group(1))


class Examples(BridgeCase):
    def test_quantization_default_config_file(self):
        rc, out, err = self.run_entry(QUANT)
        self.assertEqual(rc, 1)
        self.assertEqual(out.splitlines()[-1], "ERROR:__main__:Override YAML file not found: {}".format(
            os.path.join(self.root, "examples/quantization/conf/quantized_llama3_8b_pretrain_override_example.yaml")))


@unittest.skipUnless(CORPUS, "ATTUNE_CORPUS is not set")
class Corpus(BridgeCase):
    """Each corpus recipe with the script its users run it with."""

    def corpus(self, name):
        return os.path.join(CORPUS, "recipes", "megatron-bridge", name)

    def test_llama32_1b_pretrain_yaml(self):
        # tutorials/recipes/llama/README.md: torchrun --nproc_per_node=2 02_pretrain_with_yaml.py --config-file ...
        rc, out, err = self.run_entry(T02, "--config-file", self.corpus("llama32_1b_pretrain.yaml"), nproc=2)
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out)], list(range(10, 101, 10)))
        self.assertEqual({m.group(4) for m in STEP_LINE.finditer(out)}, {"8"})
        self.assertEqual(sorted(d for d in os.listdir(self.path("checkpoints", "llama32_1b")) if d.startswith("iter_")),
                         ["iter_0000050", "iter_0000100"])
        self.assertIn(" validation loss at iteration 100 on test set |", out)

    def test_llama32_1b_finetune_yaml(self):
        # 03_finetune_with_yaml.py --config-file conf/llama32_1b_finetune.yaml (README.md:122-125)
        args = ["--config-file", self.corpus("llama32_1b_finetune.yaml")]
        rc, out, err = self.run_entry(T03, *args)
        self.assertEqual(rc, 1)
        self.assertTrue(err.rstrip().endswith("AssertionError: Pretrained checkpoint ./checkpoints/llama32_1b does not "
                                              "exist"), err)
        # with the pretrained checkpoint of 02 present, the packed SQuAD recipe refuses micro_batch_size 2
        os.makedirs(self.path("checkpoints", "llama32_1b", "iter_0000100"))
        with open(self.path("checkpoints", "llama32_1b", "latest_checkpointed_iteration.txt"), "w") as f:
            f.write("100")
        rc, out, err = self.run_entry(T03, *args)
        self.assertEqual(rc, 1)
        self.assertIn("ValueError: Micro batch size should be 1 when training with packed sequence, but your micro "
                      "batch size is 2. \nThe following config is equivalent to your current setting for a packed "
                      "dataset. Please update your config to the following: \nSet micro batch size to 1 (currently 2)\n"
                      "Set global batch size to 64 (currently 128) \nSet packed sequence length to 8192 (currently "
                      "4096) \nFor details please visit "
                      "https://docs.nvidia.com/nemo-framework/user-guide/latest/sft_peft/packed_sequence.html\n", err)

    def test_quantized_llama3_8b_yaml(self):
        rc, out, err = self.run_entry(QUANT, "--hf-path", "meta-llama/Meta-Llama-3-8B", "--config-file",
                                      self.corpus("quantized_llama3_8b_pretrain_override_example.yaml"))
        self.assertEqual(rc, 1)
        self.assertIn("INFO:__main__:--- Final Merged Configuration ---", out)
        self.assertTrue(err.rstrip().endswith("AssertionError: Pretrained checkpoint <path to the quantized "
                                              "checkpoint> does not exist"), err)

    def test_qwen3_next_yaml(self):
        args = ["--config-file", self.corpus("qwen3_next_80b_a3b_finetune_override_example.yaml")]
        warning = ("WARNING:megatron.bridge.training.utils.omegaconf_utils:Key 'finetune_lr' in overrides not found in "
                   "config object OptimizerConfig. Skipping.")
        # one node of 8 GPUs: PP2 x EP8 needs 16 ranks (parallel_state.py:874-884)
        rc, out, err = self.run_entry(QWEN, *args, WORLD_SIZE=8, RANK=7, LOCAL_RANK=7)
        self.assertEqual(rc, 1)
        self.assertIn(warning, out)
        self.assertTrue(err.rstrip().endswith("RuntimeError: world_size (8) is not divisible by "
                                              "expert_tensor_model_pipeline_parallel size (16)"), err)
        # two nodes: the last rank logs every step (logger.log_interval: 1) up to 600
        rc, out, err = self.run_entry(QWEN, *args, "checkpoint.save=null", WORLD_SIZE=16, RANK=15, LOCAL_RANK=7,
                                      timeout=120)
        self.assertEqual(rc, 0, err)
        steps = [int(m.group(1)) for m in STEP_LINE.finditer(out)]
        self.assertEqual(steps, list(range(1, 601)))
        self.assertIn("iteration      600/     600 | consumed samples:        38400 |", out)

    def test_launch_with_sbatch_default_script(self):
        # launch_with_sbatch.sh's default TRAINING_SCRIPT, run with no arguments by torchrun
        with open(self.corpus("launch_with_sbatch.sh")) as f:
            script = re.search(r'^TRAINING_SCRIPT="([^"]+)"', f.read(), re.M).group(1)
        self.assertEqual(script, "00_quickstart_pretrain.py")
        rc, out, err = self.run_entry("tutorials/recipes/llama/" + script, nproc=2)
        self.assertEqual(rc, 0, err)
        self.assertEqual([int(m.group(1)) for m in STEP_LINE.finditer(out)], [10])
        self.assertTrue(os.path.isdir(self.path("nemo_experiments", "default", "checkpoints", "iter_0000010")))


if __name__ == "__main__":
    unittest.main()
