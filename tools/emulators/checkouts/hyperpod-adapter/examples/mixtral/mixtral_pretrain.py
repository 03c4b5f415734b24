# Stand-in for examples/mixtral/mixtral_pretrain.py of aws/sagemaker-hyperpod-training-adapter-for-nemo (0f91fdd),
# run through the attune emulators (attune_emulators/hyperpod.py).
