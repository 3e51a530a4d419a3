"""Where a build's inputs come from, the parts that touch the network, git or the host's disk: the
recorded repository (repo.py) and its mirrors, the content store, the base images (pulled or
bootstrapped) and the providers of runtimes and package managers (registries, verified downloads)."""
