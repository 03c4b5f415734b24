# Stand-in for Megatron-Bridge (067f987) tutorials/recipes/llama/01_quickstart_finetune.py, run through the attune
# framework emulators (tools/emulators/attune_emulators/bridge.py); not the framework's code.
