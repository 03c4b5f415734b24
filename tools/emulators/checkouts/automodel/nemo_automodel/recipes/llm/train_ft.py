# Stand-in for NeMo AutoModel (36044ad) nemo_automodel/recipes/llm/train_ft.py, run through the attune
# framework emulators (tools/emulators/attune_emulators/automodel.py); not the framework's code.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), *[os.pardir] * 5))
from attune_emulators import automodel  # noqa: E402

automodel.train_ft_main(sys.argv[1:])
