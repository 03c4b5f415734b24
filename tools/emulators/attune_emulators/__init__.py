"""The framework emulators: stand-ins for torchrun and the training entry
points of Megatron-LM, Megatron-Bridge, torchtitan, NeMo AutoModel, Axolotl
and the SageMaker HyperPod training adapter, for clusters without GPUs.
docs/frameworks.md states what each emulates and the source of every fact."""
