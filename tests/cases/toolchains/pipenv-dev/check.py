# pytest sits in [dev-packages], as pipenv's convention has it: the recorded run had it installed.
import pytest
import six

print("pytest", pytest.__version__, "six", six.__version__)
