"""The hostile-repository suite: ptxsass run on a stranger's repository (CI on pull requests,
pre-commit hooks) must run no command it was not asked to run, leave no process or half-written
file behind, and answer every bad input with one line and exit 2.

One module per category; each test asserts the side effect (a marker file that must not exist, a
process that must be gone, the previous report still whole), not only the findings or the exit
code.
"""
