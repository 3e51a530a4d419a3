"""Planning and building the image. Here, pure planning: the plan model and its codec, the planner
(pins, tool plan, HTTP rules, clock), the validator and prechecks, the image key and build-once cache,
and the renderer. In `sources/`, everything that touches the network, git or the host's disk: the
recorded repository and its mirrors, the content store, the base images and the providers of runtimes
and tools."""
