# Stand-in for Megatron-Bridge (067f987) scripts/training/run_recipe.py, run through the attune
# framework emulators (tools/emulators/attune_emulators/bridge.py); not the framework's code.
