# Stand-in for NVIDIA Megatron-LM (d98e8a64dd) pretrain_gpt.py, run through the attune framework
# emulators (tools/emulators/attune_emulators/megatron.py); not the framework's code.
