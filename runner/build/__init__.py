"""Planning and building the image: the plan model, its codec, the planner, the tool plan, the
validator, the base image, the installer, the source, the content store, the renderer and the
providers of runtimes and tools."""
