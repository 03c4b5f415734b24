# Stand-in for examples/mistral/mistral_pretrain.py of aws/sagemaker-hyperpod-training-adapter-for-nemo (0f91fdd),
# run through the attune emulators (attune_emulators/hyperpod.py).
