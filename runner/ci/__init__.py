"""CI support: the runner image's build context, the pull-request comment, GitHub's API."""
