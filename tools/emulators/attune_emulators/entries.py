"""Which emulator answers which entry point: Python modules (`python -m X`,
`torchrun -m X`), scripts in a framework's checkout (by the end of their
path), and console scripts (bin/axolotl, bin/automodel). Each emulator module
is imported only when its entry point runs.
"""

import importlib

# Packages whose modules only the emulators provide: a module of them that no
# emulator answers is "No module named", as Python says.
FRAMEWORK_PACKAGES = {"torchtitan", "nemo_automodel", "axolotl", "megatron", "hyperpod_nemo_adapter"}

# module -> (emulator module, function)
MODULES = {
    "torch.distributed.run": ("torchrun", "main"),
    "torchtitan.train": ("torchtitan", "main"),
    "nemo_automodel.cli.app": ("automodel", "main"),
    "axolotl.cli.train": ("axolotl", "train_module_main"),
    "axolotl.cli.preprocess": ("axolotl", "preprocess_module_main"),
}

# the script's path ends with -> (emulator module, function)
SCRIPTS = [
    ("pretrain_gpt.py", ("megatron", "main")),
    ("scripts/training/run_recipe.py", ("bridge", "run_recipe_main")),
    ("tutorials/recipes/llama/00_quickstart_pretrain.py", ("bridge", "quickstart_pretrain_main")),
    ("tutorials/recipes/llama/01_quickstart_finetune.py", ("bridge", "quickstart_finetune_main")),
    ("tutorials/recipes/llama/02_pretrain_with_yaml.py", ("bridge", "pretrain_with_yaml_main")),
    ("tutorials/recipes/llama/03_finetune_with_yaml.py", ("bridge", "finetune_with_yaml_main")),
    ("examples/quantization/pretrain_quantized_llama3_8b.py", ("bridge", "quantized_pretrain_main")),
    ("examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py", ("bridge", "qwen3_next_finetune_main")),
    ("examples/llama/llama_pretrain.py", ("hyperpod", "llama_main")),
    ("examples/mistral/mistral_pretrain.py", ("hyperpod", "mistral_main")),
    ("examples/mixtral/mixtral_pretrain.py", ("hyperpod", "mixtral_main")),
    ("examples/deepseek/deepseek_pretrain.py", ("hyperpod", "deepseek_main")),
    ("examples/custom_model/custom_pretrain.py", ("hyperpod", "custom_main")),
]


def _load(target):
    name, func = target
    module = importlib.import_module("attune_emulators." + name)
    return getattr(module, func)


def module_entry(module):
    target = MODULES.get(module)
    return _load(target) if target else None


def script_entry(path):
    normalized = path.replace("\\", "/")
    for suffix, target in SCRIPTS:
        if normalized == suffix or normalized.endswith("/" + suffix):
            return _load(target)
    return None
