"""The HyperPod emulator (attune_emulators/hyperpod.py), run as a process the
way a HyperPod job runs it: the launcher-resolved recipe handed to the training
adapter's example script,

  torchrun --nproc_per_node 8 examples/llama/llama_pretrain.py --config-path=DIR --config-name=NAME_hydra.yaml

Most cases run one worker with torchrun's environment set by hand (rank 0 of
the world the recipe names), a few run the emulated torchrun with every rank.

Run: cd tools/emulators && /usr/bin/python3 -m unittest tests.test_hyperpod -v
"""

import copy
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

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, "bin")
FIXTURES = os.path.join(HERE, "fixtures", "hyperpod")
EXAMPLES = os.path.join(ROOT, "checkouts", "hyperpod-adapter", "examples")
SCRIPTS = {
    "llama": os.path.join(EXAMPLES, "llama", "llama_pretrain.py"),
    "mistral": os.path.join(EXAMPLES, "mistral", "mistral_pretrain.py"),
    "mixtral": os.path.join(EXAMPLES, "mixtral", "mixtral_pretrain.py"),
    "deepseek": os.path.join(EXAMPLES, "deepseek", "deepseek_pretrain.py"),
    "custom": os.path.join(EXAMPLES, "custom_model", "custom_pretrain.py"),
}
CORPUS = os.environ.get("ATTUNE_CORPUS", "")
RECIPES = os.path.join(CORPUS, "recipes", "hyperpod") if CORPUS else ""
SITE = "/opt/conda/lib/python3.11/site-packages"
HINT = "\nSet the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n"
# Lightning's TQDM bar (BAR_FORMAT) as one refresh shows it
BAR = re.compile(r"Epoch (\d+): +(\d+)%\|(.{10})\| (\d+)/(\d+) \[(\d\d:\d\d|\d+:\d\d:\d\d)<([0-9:?]+), +([0-9.?]+)it/s"
                 r"(?:, (.*?))?\]")

sys.path.insert(0, ROOT)
from attune_emulators import hyperpod  # noqa: E402  (the test resolves corpus recipes as the launcher does)

_CLEAN = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR",
          "MASTER_PORT", "TORCHELASTIC_RUN_ID", "HYDRA_FULL_ERROR", "SLURM_JOB_ID", "SLURM_NTASKS",
          "SLURM_NTASKS_PER_NODE", "SLURM_JOB_NAME", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NNODES",
          "COLUMNS", "LINES", "CUDA_VISIBLE_DEVICES", "OC_CAUSE")


def _env(extra=None, scale="100000"):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ATTUNE_EMULATE_") and not k.startswith("PET_") and k not in _CLEAN}
    env["ATTUNE_EMULATE_TIME_SCALE"] = scale
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra or {})
    return env


def _worker_env(nodes=1, per_node=8, rank=0):
    """torchrun's worker environment for one rank."""
    return {"RANK": str(rank), "LOCAL_RANK": str(rank % per_node), "WORLD_SIZE": str(nodes * per_node),
            "LOCAL_WORLD_SIZE": str(per_node), "GROUP_RANK": str(rank // per_node), "GROUP_WORLD_SIZE": str(nodes),
            "TORCHELASTIC_RUN_ID": "100", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500"}


def _decoded(r):
    """The process's output as written (the bar's \r kept)."""
    r.stdout, r.stderr = r.stdout.decode("utf-8"), r.stderr.decode("utf-8")
    return r


def bars(stdout):
    """Every refresh of the training bar: (n, total, postfix)."""
    return [(int(m.group(4)), int(m.group(5)), m.group(9) or "") for m in BAR.finditer(stdout)]


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hyperpod-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.exp = os.path.join(self.dir, "exp")

    def worker(self, args, kind="llama", nodes=1, per_node=8, extra=None, under_torchrun=True, timeout=30):
        """One worker process (rank 0 of `nodes` x `per_node`) as torchrun starts it."""
        env = _worker_env(nodes, per_node) if under_torchrun else {}
        env.update(extra or {})
        cmd = [os.path.join(BIN, "python"), "-u", SCRIPTS[kind]] + args
        return _decoded(subprocess.run(cmd, cwd=self.dir, env=_env(env), capture_output=True, timeout=timeout))

    def torchrun(self, args, nproc=8, kind="llama", extra=None, timeout=60):
        cmd = [os.path.join(BIN, "torchrun"), "--nproc_per_node", str(nproc), SCRIPTS[kind]] + args
        return _decoded(subprocess.run(cmd, cwd=self.dir, env=_env(extra), capture_output=True, timeout=timeout))

    def small(self, *more):
        return ["--config-path=" + FIXTURES, "--config-name=small_hydra.yaml", "exp_manager.exp_dir=" + self.exp] + \
            list(more)


class Training(Case):
    def test_torchrun_trains_with_the_bar_on_rank_0_and_checkpoints(self):
        r = self.torchrun(self.small())
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        # rank 0 only: NeMo's stream handlers, the progress bar, Lightning's rank-zero lines
        self.assertEqual(r.stdout.count("************** Experiment configuration ***********"), 1)
        self.assertEqual(r.stdout.count("Experiments will be logged at {}/experiment/".format(self.exp)), 1)
        self.assertEqual(r.stderr.count("GPU available: True (cuda), used: True"), 1)
        self.assertEqual(r.stderr.count("`Trainer.fit` stopped: `max_steps=6` reached."), 1)
        # every rank
        self.assertEqual(len(re.findall(r"^Initializing distributed: GLOBAL_RANK: \d, MEMBER: \d/8$", r.stderr,
                                        re.M)), 8)
        self.assertEqual(len(re.findall(r"^LOCAL_RANK: \d - CUDA_VISIBLE_DEVICES: \[0,1,2,3,4,5,6,7\]$", r.stderr,
                                        re.M)), 8)
        # one bar: every batch refreshes it twice (the new n, then the postfix), written with \r
        b = bars(r.stdout)
        # reset(total) and set_description("Epoch 0") at n=0, two per batch, on_train_epoch_end, close()
        self.assertEqual([n for n, _, _ in b], [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 6, 6])
        self.assertTrue(all(total == 12500 for _, total, _ in b))  # 100000 samples / dp 4 / batch 2
        self.assertIn("\rTraining: |          | 0/? [00:00<?, ?it/s]", r.stdout)
        self.assertTrue(r.stdout.endswith("]\n"))
        self.assertEqual(b[2][2], "")  # batch 1: nothing logged yet
        self.assertRegex(b[4][2], r"^Loss/train=\d+\.\d+, Norms/grad_norm=\d\.\d+, LR/learning_rate=[0-9.e-]+$")
        # checkpoints: sharded every 2 steps (top 2, the last not counted), full at the last step
        ck = os.path.join(self.exp, "checkpoints")
        for step in (2, 4, 6):
            for tp in (0, 1):
                shard = os.path.join(ck, "sharded", "step_{}".format(step), "tp{}_ep0".format(tp))
                self.assertEqual(len([f for f in os.listdir(shard) if f.endswith(".distcp")]), 4, shard)
        self.assertTrue(os.path.isfile(os.path.join(ck, "full", "steps_6", "pytorch_model.bin")))
        # exp_manager's files, Hydra's outputs/
        log_dir = os.path.join(self.exp, "experiment")
        stamped = [d for d in os.listdir(log_dir) if os.path.isdir(os.path.join(log_dir, d))]
        self.assertEqual(len(stamped), 1)
        self.assertTrue(os.path.isfile(os.path.join(log_dir, stamped[0], "cmd-args.log")))
        self.assertTrue(os.path.isfile(os.path.join(log_dir, stamped[0],
                                                    "sagemaker_log_globalrank-0_localrank-0.txt")))
        self.assertTrue(os.path.isfile(os.path.join(log_dir, "sagemaker_log_globalrank-7_localrank-7.txt")))
        hydra_dirs = [os.path.join(dp, d) for dp, ds, _ in os.walk(os.path.join(self.dir, "outputs")) for d in ds
                      if d == ".hydra"]
        self.assertTrue(hydra_dirs)
        with open(os.path.join(hydra_dirs[0], "overrides.yaml")) as f:
            self.assertEqual(yaml.safe_load(f), ["exp_manager.exp_dir=" + self.exp])

    def test_overrides_and_pruning_and_lr_warning(self):
        r = self.worker(self.small("trainer.max_steps=8", "++model.lr_decay_iters=8",
                                   "exp_manager.checkpoint_callback_params.save_top_k=2"))
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        ck = os.path.join(self.exp, "checkpoints", "sharded")
        # top 2 of the periodic saves (step_2 pruned at step 6); the last step's save is not ranked
        self.assertEqual(sorted(os.listdir(ck)), ["step_4", "step_6", "step_8"])
        self.assertIn("Removed checkpoint: {}".format(os.path.join(ck, "step_2")), r.stdout)
        self.assertEqual(r.stderr.count("lr_scheduler.py:284: UserWarning: To get the last learning rate computed by "
                                        "the scheduler, please use `get_last_lr()`."), 1)
        self.assertEqual(max(n for n, _, _ in bars(r.stdout)), 8)

    def test_resume_from_a_sharded_checkpoint(self):
        r = self.worker(self.small())
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        ckpt = os.path.join(self.exp, "checkpoints", "sharded", "step_4")
        r = self.worker(self.small("exp_manager.resume_from_checkpoint=" + ckpt, "trainer.max_steps=7"))
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn("loading sharded checkpoint: " + ckpt, r.stdout)
        self.assertIn("Loaded Sharded checkpoint", r.stdout)
        self.assertEqual(sorted({n for n, _, _ in bars(r.stdout)}), [0, 5, 6, 7])
        self.assertTrue(os.path.isdir(os.path.join(self.exp, "checkpoints", "full", "steps_7")))
        # a checkpoint that is not there
        r = self.worker(self.small("exp_manager.resume_from_checkpoint=" + os.path.join(self.dir, "nothing")))
        self.assertEqual(r.returncode, 1)
        self.assertIn("FileNotFoundError: [Errno 2] No such file or directory: '{}'".format(
            os.path.join(self.dir, "nothing", "tp0_ep0", ".metadata")), r.stderr)

    def test_sigterm_logs_finishes_the_batch_and_exits_0(self):
        cmd = [os.path.join(BIN, "python"), "-u", SCRIPTS["llama"]] + self.small("trainer.max_steps=100000")
        p = subprocess.Popen(cmd, cwd=self.dir, env=_env(_worker_env(), scale="400"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        seen = b""
        deadline = time.time() + 20
        while time.time() < deadline and "Epoch 0:   0%|          | 3/".encode() not in seen:
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
        out, err = (seen + out).decode(), err.decode()
        self.assertEqual(p.returncode, 0)
        self.assertIn("[rank: 0] Received SIGTERM: 15\n", err)
        self.assertNotIn("`Trainer.fit` stopped", err)
        self.assertTrue(out.endswith("]\n"))
        self.assertFalse(os.path.isdir(os.path.join(self.exp, "checkpoints", "full")))

    def test_oom_fails_every_rank_at_the_predicted_step(self):
        pred = os.path.join(self.dir, "pred.json")
        with open(pred, "w") as f:
            json.dump({"step_time_s": 2.0, "memory": {"hbm_gib": 80.0, "peak_allocated_gib": 90.0,
                                                      "peak_reserved_gib": 92.0},
                       "failure": "oom", "error": "out of memory", "fails_at_step": 3}, f)
        r = self.worker(self.small(), extra={"ATTUNE_EMULATE_PREDICTION": pred})
        self.assertEqual(r.returncode, 1)
        self.assertIn("Error executing job with overrides: ['exp_manager.exp_dir={}']".format(self.exp), r.stderr)
        self.assertIn('  File "{}/pytorch_lightning/loops/training_epoch_loop.py", line 250, in advance'.format(SITE),
                      r.stderr)
        self.assertRegex(r.stderr, r"torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate [\d.]+ GiB\. "
                                   r"GPU 0 has a total capacity of 80\.00 GiB")
        self.assertTrue(r.stderr.endswith(HINT))
        self.assertEqual(max(n for n, _, _ in bars(r.stdout)), 2)


class HydraCommandLine(Case):
    def test_version_and_unknown_flag(self):
        r = self.worker(["--version"])
        self.assertEqual((r.returncode, r.stdout), (0, "Hydra 1.3.2\n"))
        r = self.worker(self.small("--bogus"))
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("usage: llama_pretrain.py [--help] [--hydra-help] [--version]"))
        self.assertTrue(r.stderr.endswith("llama_pretrain.py: error: unrecognized arguments: --bogus\n"))

    def test_absolute_config_name_is_looked_up_under_the_search_path(self):
        name = os.path.join(FIXTURES, "small_hydra.yaml")
        r = self.worker(["--config-path=" + FIXTURES, "--config-name=" + name])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr, "Cannot find primary config '{}'. Check that it's in your config search path.\n\n"
                                   "Config search path:\n\tprovider=hydra, path=pkg://hydra.conf\n\tprovider=main, "
                                   "path=file://{}\n\tprovider=schema, path=structured://\n{}".format(
                                       name[1:], FIXTURES, HINT))
        r = self.worker(["--config-path=" + FIXTURES, "--config-name=" + name], extra={"HYDRA_FULL_ERROR": "1"})
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("Traceback (most recent call last):\n"))
        self.assertIn("hydra/_internal/defaults_list.py\", line 799, in config_not_found_error", r.stderr)
        self.assertIn("hydra.errors.MissingConfigException: Cannot find primary config '{}'".format(name[1:]),
                      r.stderr)

    def test_config_name_with_and_without_yaml_suffix(self):
        for name in ("small_hydra", "small_hydra.yaml"):
            r = self.worker(["--config-path=" + FIXTURES, "--config-name=" + name, "exp_manager.exp_dir=" + self.exp,
                             "trainer.max_steps=1"])
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        r = self.worker(["--config-path=" + FIXTURES, "--config-name=small_hydra.yml"])
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.startswith("Cannot find primary config 'small_hydra.yml'."))
        r = self.worker(["--config-path=" + os.path.join(FIXTURES, "small_hydra.yaml")])
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.endswith("ValueError: Using config_path to specify the config name is not supported, "
                                          "specify the config name via config_name.\nSee https://hydra.cc/docs/1.2/"
                                          "upgrades/0.11_to_1.0/config_path_changes\n\n"))
        r = self.worker(["--config-path=" + os.path.join(self.dir, "nowhere"), "--config-name=x"])
        self.assertEqual(r.stderr, "Primary config directory not found.\nCheck that the config directory '{}' exists "
                                   "and readable\n{}".format(os.path.join(self.dir, "nowhere"), HINT))

    def test_override_errors(self):
        cases = {
            "foo": "Error parsing override 'foo'\nmissing EQUAL at '<EOF>'\nSee https://hydra.cc/docs/1.2/advanced/"
                   "override_grammar/basic for details\n",
            "trainer.foo=1": "Could not override 'trainer.foo'.\nTo append to your config use +trainer.foo=1\nKey "
                             "'foo' is not in struct\n    full_key: trainer.foo\n    object_type=dict\n",
            "nothere.x=1": "Could not override 'nothere.x'.\nTo append to your config use +nothere.x=1\nKey 'nothere' "
                           "is not in struct\n    full_key: nothere\n    object_type=dict\n",
            "+trainer.max_steps=3": "Could not append to config. An item is already at 'trainer.max_steps'.\nEither "
                                    "remove + prefix: 'trainer.max_steps=3'\nOr add a second + to add or override "
                                    "'trainer.max_steps': '++trainer.max_steps=3'\n\n",
            "trainer.max_steps=1,2": "Ambiguous value for argument 'trainer.max_steps=1,2'\n1. To use it as a list, use "
                                     "key=[value1,value2]\n2. To use it as string, quote the value: "
                                     "key=\\'value1,value2\\'\n3. To sweep over it, add --multirun to your command "
                                     "line\n",
            "x=a#b": "LexerNoViableAltException: x=a#b\n" + " " * 30 + "^\nSee https://hydra.cc/docs/1.2/advanced/"
                     "override_grammar/basic for details\n",
            "~trainer.nope": "Could not delete from config. 'trainer.nope' does not exist.\n",
        }
        for override, text in cases.items():
            r = self.worker(self.small(override))
            self.assertEqual((r.returncode, r.stderr), (1, text + HINT), override)

    def test_interpolation_left_unresolved_is_hydras_report_exit_1(self):
        args = ["--config-path=" + FIXTURES, "--config-name=unresolved", "exp_manager.exp_dir=" + self.exp]
        r = self.worker(args)
        self.assertEqual(r.returncode, 1)
        cu = SITE + "/hyperpod_nemo_adapter/utils/config_utils.py"
        self.assertEqual(r.stderr, "\n".join([
            "Error executing job with overrides: ['exp_manager.exp_dir={}']".format(self.exp),
            "Traceback (most recent call last):",
            '  File "{}", line 101, in validations_wrapper'.format(cu),
            "    merged_config, validated_model = _validate_schema(cfg, extra=extra)",
            "                                     " + "^" * 34,
            '  File "{}", line 79, in _validate_schema'.format(cu),
            "    config_dict = OmegaConf.to_container(cfg, resolve=True)",
            "                  " + "^" * 41,
            "omegaconf.errors.InterpolationKeyError: Interpolation key 'recipes.trainer.max_steps' not found",
            "    full_key: model.lr_decay_iters",
            "    object_type=dict", ""]) + HINT)
        self.assertEqual(r.stdout, "")
        r = self.worker(args, extra={"HYDRA_FULL_ERROR": "1"})
        self.assertEqual(r.returncode, 1)
        self.assertIn('  File "{}/hydra/core/utils.py", line 186, in run_job'.format(SITE), r.stderr)
        self.assertTrue(r.stderr.endswith("omegaconf.errors.InterpolationKeyError: Interpolation key "
                                          "'recipes.trainer.max_steps' not found\n    full_key: model.lr_decay_iters\n"
                                          "    object_type=dict\n"))
        self.assertNotIn("HYDRA_FULL_ERROR", r.stderr)


class Validation(Case):
    def test_schema_errors_are_logged_on_every_rank_and_exit_0(self):
        r = self.torchrun(self.small("exp_manager.exp_dir=null", "model.data.train_dir=null"), nproc=2)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(r.stderr.count(" - smp - ERROR - 3 validation errors for ConfigWithSMPForbid\n"), 2)
        for text in (
                "model\n  Value error, 'train_dir' is required since model is not using Synthetic or multi-modal Data "
                "[type=value_error, input_value={'model_type': 'llama_v3'...er': {'enabled': False}}, "
                "input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.10/v/value_error",
                "trainer\n  Value error, 'devices' (8) does not equal actual number of devices (2) [type=value_error, "
                "input_value={'devices': 8, 'num_nodes... 'limit_val_batches': 0}, input_type=dict]",
                "exp_manager.exp_dir\n  Input should be a valid string [type=string_type, input_value=None, "
                "input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.10/v/"
                "string_type"):
            self.assertEqual(r.stderr.count(text), 2, text)
        self.assertNotIn("Epoch 0", r.stdout)  # the run "succeeds" having trained nothing
        self.assertNotIn("Experiment configuration", r.stdout)

    def test_layout_checks(self):
        r = self.worker(self.small(), nodes=2)
        self.assertEqual(r.returncode, 0)
        self.assertIn("'num_nodes' (1) does not equal actual number of nodes (2)", r.stderr)
        r = self.worker(self.small("model.shard_degree=3"))
        self.assertIn("  Value error, Please provide valid sizes: world size (8) is not a product of (shard_degree, "
                      "tensor_model_parallel_degree, expert_model_parallel_degree) (3, 2, 1). [type=value_error",
                      r.stderr)
        r = self.worker(self.small("model.context_parallel_degree=8"))
        self.assertIn("Please provide valid sizes: context parallel degree (8) shouldn't be greater than shard degree "
                      "(4)", r.stderr)
        r = self.worker(self.small("use_smp_model=false"))
        self.assertIn("1 validation error for ConfigForbid\nmodel\n  Value error, Non SMP Model implementations do "
                      "not support tensor_model_parallel_degree or expert_model_parallel_degree > 1", r.stderr)
        self.assertEqual(r.returncode, 0)

    def test_finetune_needs_hf_model_and_unknown_keys(self):
        r = self.worker(self.small("model.do_finetune=true"))
        self.assertEqual(r.returncode, 0)
        self.assertIn("Value error, Must provide 'hf_model_name_or_path' or set 'do_finetune' to False", r.stderr)
        r = self.worker(self.small("+model.not_a_field=1"))
        self.assertIn("model.not_a_field\n  Extra inputs are not permitted [type=extra_forbidden, input_value=1, "
                      "input_type=int]", r.stderr)
        # top-level extras: refused only where SLURM_JOB_ID is set (BaseConfig's extra)
        r = self.worker(self.small("+extra_key=1", "trainer.max_steps=1"))
        self.assertEqual(r.returncode, 0)
        self.assertIn("`Trainer.fit` stopped", r.stderr)
        r = self.worker(self.small("+extra_key=1"), extra={"SLURM_JOB_ID": "42"})
        self.assertIn("extra_key\n  Extra inputs are not permitted [type=extra_forbidden", r.stderr)

    def test_model_type_dispatch(self):
        r = self.worker(self.small("model.model_type=qwen_v2"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("    trainer.fit(model_module, datamodule=data_module)\n                ^^^^^^^^^^^^\n"
                      "UnboundLocalError: cannot access local variable 'model_module' where it is not associated with "
                      "a value\n", r.stderr)
        r = self.worker(self.small("model.model_type=gpt_oss", "model.tensor_model_parallel_degree=1",
                                   "use_smp_model=false"), kind="deepseek")
        self.assertEqual(r.returncode, 1)
        self.assertIn(' - smp - WARNING - Model "gpt_oss" is not supported by SageMaker Model Parallel. Please ensure '
                      '`use_smp_model` is False', r.stderr)
        self.assertIn("TypeError: `model` must be a `LightningModule` or `torch._dynamo.OptimizedModule`, got "
                      "`NoneType`", r.stderr)
        r = self.worker(self.small("model.model_type=gpt_oss", "trainer.max_steps=1"), kind="mistral")
        self.assertEqual(r.returncode, 0)  # no dispatch in mistral_pretrain.py
        r = self.worker(self.small("~model.model_type", "model.hf_model_name_or_path=/models/x",
                                   "trainer.max_steps=1"))
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])  # the schema's default (llama_v3)
        r = self.worker(self.small("~model.model_type"))  # and hf_model_name_or_path is null
        self.assertEqual(r.returncode, 1)
        self.assertIn("AttributeError: model_type and hf_model_name_or_path are missing but at least one is required",
                      r.stderr)

    def test_slurm_ntasks_without_torchrun(self):
        """Not under torchrun, Lightning picks SLURMEnvironment when SLURM_NTASKS is set: --ntasks without
        --ntasks-per-node is refused when the Trainer is built."""
        r = self.worker(self.small(), under_torchrun=False, extra={"SLURM_NTASKS": "2", "SLURM_JOB_NAME": "train"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("RuntimeError: You set `--ntasks=2` in your SLURM bash script, but this variable is not "
                      "supported. HINT: Use `--ntasks-per-node=2` instead.", r.stderr)
        # under torchrun, TorchElastic wins and SLURM_NTASKS changes nothing
        r = self.worker(self.small("trainer.max_steps=1"), extra={"SLURM_NTASKS": "2", "SLURM_JOB_NAME": "train"})
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])


# ---------------------------------------------------------------- the corpus, resolved as the launcher resolves it


def launcher_resolve(raw, base_results_dir, exp_dir=None, train_dir=None, hf_model=None, head=False):
    """What main.py + SMTraining.save_stage_hydra_config write as <run.name>_hydra.yaml: the recipe mounted
    as `recipes` (and copied to `training`) beside base_results_dir, the command line's recipes.* values
    set, every interpolation resolved. (HEAD also adds `model: {ub_tp_comm_overlap: false}` when there is
    no model.)"""
    recipe = copy.deepcopy(raw)
    if exp_dir is not None:
        recipe["exp_manager"]["exp_dir"] = exp_dir
    if train_dir is not None:
        recipe["model"]["data"]["train_dir"] = train_dir
    if hf_model is not None:
        recipe["model"]["hf_model_name_or_path"] = hf_model
    if head and "model" not in recipe:
        recipe["model"] = {"ub_tp_comm_overlap": False}
    root = {"base_results_dir": base_results_dir, "recipes": recipe, "training": copy.deepcopy(recipe)}
    return hyperpod.Resolver(root).resolve_all()["recipes"]


# recipe -> (entry script, nodes, model keys the shipped file lacks for the adapter to start)
CORPUS_HF = {
    "hf_llama3_8b_seq8k_gpu_p5x16_pretrain": ("llama", 16, False),
    "hf_llama3_70b_seq16k_gpu_p5x64_pretrain": ("llama", 64, False),
    "hf_mistral_7b_seq8k_gpu_p5x16_pretrain": ("mistral", 16, False),
    "hf_mixtral_8x22b_seq8k_gpu_p5x64_pretrain": ("mixtral", 64, False),
    "hf_deepseek_r1_671b_seq8k_gpu_qlora": ("deepseek", 2, True),
    "hf_gpt_oss_120b_seq4k_gpu_lora": ("custom", 1, True),
    "hf_llama3_405b_seq128k_gpu_qlora": ("llama", 2, True),
}


@unittest.skipUnless(CORPUS, "ATTUNE_CORPUS is not set")
class Corpus(Case):
    def load(self, name):
        with open(os.path.join(RECIPES, name + ".yaml")) as f:
            return hyperpod.load_yaml(f.name)

    def write(self, data):
        name = data["run"]["name"] + "_hydra.yaml"
        path = os.path.join(self.dir, "launch")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, name), "w") as f:
            yaml.safe_dump(data, f, sort_keys=False)
        return ["--config-path=" + path, "--config-name=" + name]

    def test_hf_recipes_as_shipped_exit_0_with_the_schema_errors(self):
        """The launcher's defaults leave exp_dir and train_dir null: the adapter logs and exits 0."""
        for name, (kind, nodes, _) in CORPUS_HF.items():
            data = launcher_resolve(self.load(name), self.dir)
            self.assertEqual(data["exp_manager"]["checkpoint_dir"], "None/checkpoints/")
            r = self.worker(self.write(data), kind=kind, nodes=nodes)
            self.assertEqual(r.returncode, 0, name)
            self.assertIn("2 validation errors for Config", r.stderr, name)
            self.assertIn("'train_dir' is required since model is not using Synthetic or multi-modal Data", r.stderr)
            self.assertIn("exp_manager.exp_dir\n  Input should be a valid string", r.stderr, name)
            self.assertNotIn("Epoch 0", r.stdout, name)

    def test_hf_recipes_start_once_the_launcher_is_given_the_paths(self):
        for name, (kind, nodes, finetune) in CORPUS_HF.items():
            raw = self.load(name)
            data = launcher_resolve(raw, self.dir, exp_dir=self.exp, train_dir=os.path.join(self.dir, "data"))
            data["trainer"]["max_steps"] = 2  # a launcher override (recipes.trainer.max_steps=2) would also set it
            args = self.write(data)
            r = self.worker(args, kind=kind, nodes=nodes)
            if finetune:
                self.assertEqual(r.returncode, 0, name)
                self.assertIn("Value error, Must provide 'hf_model_name_or_path' or set 'do_finetune' to False",
                              r.stderr, name)
                data = launcher_resolve(raw, self.dir, exp_dir=self.exp, train_dir=os.path.join(self.dir, "data"),
                                        hf_model="/models/base")
                data["trainer"]["max_steps"] = 2
                r = self.worker(self.write(data), kind=kind, nodes=nodes)
            self.assertEqual(r.returncode, 0, name + r.stderr[-2000:])
            self.assertIn("`Trainer.fit` stopped: `max_steps=2` reached.", r.stderr, name)
            self.assertEqual(max(n for n, _, _ in bars(r.stdout)), 2, name)
            # nodes other than the recipe's: the adapter refuses (and still exits 0)
            r = self.worker(args, kind=kind, nodes=nodes * 2)
            self.assertIn("'num_nodes' ({}) does not equal actual number of nodes ({})".format(nodes, nodes * 2),
                          r.stderr, name)

    def test_raw_recipe_handed_to_the_adapter_fails_on_base_results_dir(self):
        shutil.copy(os.path.join(RECIPES, "hf_llama3_8b_seq8k_gpu_p5x16_pretrain.yaml"), self.dir)
        r = self.worker(["--config-path=" + self.dir, "--config-name=hf_llama3_8b_seq8k_gpu_p5x16_pretrain"],
                        nodes=16)
        self.assertEqual(r.returncode, 1)
        self.assertIn("omegaconf.errors.InterpolationKeyError: Interpolation key 'base_results_dir' not found\n"
                      "    full_key: run.results_dir\n    object_type=dict\n", r.stderr)

    def test_llmft_recipe_through_the_fall_through_entry(self):
        """HEAD's shipped llmft scripts pass git.entry_module, which the stage does not read: the entry falls
        through to examples/llama/llama_pretrain.py, where the recipe has no model_type."""
        data = launcher_resolve(self.load("llmft_llama3_1_8b_instruct_seq4k_gpu_sft_fft"), self.dir, head=True)
        r = self.worker(self.write(data), nodes=1)
        self.assertEqual(r.returncode, 1)
        self.assertIn(" - smp - ERROR - model_type and hf_model_name_or_path are missing but at least one is "
                      "required", r.stderr)
        self.assertIn("AttributeError: model_type and hf_model_name_or_path are missing but at least one is required",
                      r.stderr)


if __name__ == "__main__":
    unittest.main()
