# Stand-in for Megatron-Bridge (067f987) examples/quantization/pretrain_quantized_llama3_8b.py, run through the attune
# framework emulators (tools/emulators/attune_emulators/bridge.py); not the framework's code.
