"""OmegaConf's YAML loader, which the Hydra/OmegaConf frameworks (Megatron-Bridge,
the SageMaker HyperPod adapter) read their config files with.

omegaconf/_utils.py get_yaml_loader (the same in 2.2.3 and 2.3.1): a
SafeLoader that refuses duplicate keys, reads YAML 1.2 floats (`1e-5` is a
float, not a string) and has no timestamps.
"""

import re

import yaml


class Loader(yaml.SafeLoader):
    def construct_mapping(self, node, deep=False):
        keys = set()
        for key_node, _ in node.value:
            if key_node.tag != yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG:
                continue
            if key_node.value in keys:
                raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                        "found duplicate key {}".format(key_node.value),
                                                        key_node.start_mark)
            keys.add(key_node.value)
        return yaml.SafeLoader.construct_mapping(self, node, deep=deep)


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile("""^(?:
     [-+]?[0-9]+(?:_[0-9]+)*\\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
    |\\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\\.[0-9_]*
    |[-+]?\\.(?:inf|Inf|INF)
    |\\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))
Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in Loader.yaml_implicit_resolvers.items()}
