# Stand-in for Megatron-Bridge (067f987) examples/models/qwen/qwen3_next/finetune_qwen3_next_80b_a3b.py, run through the attune
# framework emulators (tools/emulators/attune_emulators/bridge.py); not the framework's code.
