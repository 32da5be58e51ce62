"""The Action's Docker image, built from the Dockerfile and run as the Actions runner runs
it (``python -m tests.image.check_image``; ``.ci/image`` installs what it needs)."""
