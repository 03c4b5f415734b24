# Stand-in for examples/deepseek/deepseek_pretrain.py of aws/sagemaker-hyperpod-training-adapter-for-nemo (0f91fdd),
# run through the attune emulators (attune_emulators/hyperpod.py).
