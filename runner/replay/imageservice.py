"""The image service: every image replay, bisect, the farm and the workers run on comes from
here. One identity (build/images.image_key: plans that give the same image), one build-once
cache (build/images.ImageBank, constructed only here) whose lock also covers two plans that
render one context (one tag) and the HTTP sidecar's image, and the tool-cache volumes attempts
share (toolcache.GoCache). The Replayer (the runner of attempts) asks it for images; it never builds one itself."""
from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..build.images import ImageBank, Made
from ..engine.builders import context_digest
from ..build.plan import BaseImage, Plan
from ..build.render import Context, write_context
from ..build.sources.baseimage import ensure_base, sidecar_base_ref
from ..config import Settings
from ..engine import LABEL, Engine
from ..facts.reads import scan
from . import image as images
from .image import BuiltImage
from .options import ReplayOptions
from .progress import Progress
from .slots import context_slot, stamp
from .toolcache import GoCache


class ImageService:
    def __init__(self, engine: Callable[[], Engine], settings: Settings, options: ReplayOptions,
                 progress: Progress, label: str) -> None:
        self._engine, self.settings, self.options, self.progress, self.label = \
            engine, settings, options, progress, label
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        # Go's build cache: one volume per toolchain on the machine, for every attempt (toolcache.py)
        self.go_cache = GoCache(engine, options.share_tool_cache, progress.step,
                                lambda volume: images.record_volume_use(settings, volume))
        # each distinct image once; a worker's engine may lose one: it is checked again
        self._bank: ImageBank[BuiltImage] = ImageBank(
            self._make, still_there=(lambda i: engine().image_exists(i.ref)) if options.recheck_images else None)

    def get(self, plan: Plan) -> BuiltImage:
        """Build (or reuse) the image of this plan; a plan that shares its image builds nothing."""
        return self._bank.get(plan)

    def fetch(self, plan: Plan) -> tuple[BuiltImage, bool]:
        """The plan's image as it was made, and whether this call made it (bisect's trials)."""
        return self._bank.fetch(plan)

    @property
    def on_build(self) -> Made | None:
        return self._bank.on_build

    @on_build.setter
    def on_build(self, tell: Made | None) -> None:
        self._bank.on_build = tell  # the farm's night says each build as it starts and ends

    @property
    def images(self) -> int:
        """Distinct images asked for (built or found cached)."""
        return self._bank.images

    @property
    def built(self) -> int:
        """Of those, images really built here (not already in the engine)."""
        return self._bank.built

    def sidecar(self, base: BaseImage, say: Callable[[str], None]) -> tuple[str, str]:
        """The HTTP replay server's image for a plan's base (its base, its tag): built once per content
        (httpreplay/session.ensure_image), under the same lock when parallel trials ask together."""
        from ..httpreplay.session import ensure_image

        engine = self._engine()
        base_ref = sidecar_base_ref(engine, self.settings, base, say)
        with self._tag_lock(f"httpreplay:{base_ref}"):
            return base_ref, ensure_image(engine, self.settings, base_ref, self.label, say)

    def _make(self, plan: Plan) -> BuiltImage:
        engine = self._engine()
        with self.progress.step(f"resolve base {plan.base.suite}"):
            ensure_base(engine, self.settings, plan.base, self.progress.say)
        with context_slot(self.settings.cache_dir / "contexts") as ctx_dir:
            with self.progress.step("fetch runtimes, package managers and source"):
                ctx = write_context(plan, self.settings, ctx_dir,
                                    "buildkit" if engine.builder_name == "buildkit" else "classic")
            digest = context_digest(ctx_dir, stamp)  # and each file's mtime from its content
            tag = f"{self.settings.image_repo}:{plan.capsule_id[:12].lower()}-{digest[:12]}"
            reads = scan(ctx_dir / "src")  # while the context is here: it is emptied after the build
            with self._tag_lock(tag):
                return dataclasses.replace(self._image_of(plan, ctx_dir, ctx, tag), reads=reads)

    def _image_of(self, plan: Plan, ctx_dir: Path, ctx: Context, tag: str) -> BuiltImage:
        engine = self._engine()
        start = time.monotonic()
        built, steps_run = False, 0
        if not engine.image_exists(tag):
            with self.progress.step(f"build image ({engine.builder_name})"):
                labels = {LABEL: "image", "replay.capsule": plan.capsule_id}
                steps_run = images.build(engine, ctx_dir, tag, labels, self.progress.say, self.options.verbose,
                                         self.settings.build_timeout_s)
            built = True
        else:
            self.progress.say(f"image {tag} is cached: nothing to build")
        facts = images.image_facts(engine, self.settings, tag, self.label)
        return BuiltImage(tag, built, time.monotonic() - start, ctx, facts.drift, steps_run, facts.libc_version,
                          facts.unpinned, warm=facts.warm)

    def _tag_lock(self, tag: str) -> threading.Lock:
        """Two plans of different images may still render one context (one tag): built once too."""
        with self._lock:
            return self._locks.setdefault(tag, threading.Lock())

