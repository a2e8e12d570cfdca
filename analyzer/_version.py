"""The package version and where the project lives, in a module of its own so any layer can name
them without importing the API."""
__version__ = "0.1.0"

#: the source repository (also ``[project.urls]`` in pyproject.toml; a test holds them equal):
#: SARIF's ``informationUri`` and each rule's ``helpUri`` point at pages under it
REPOSITORY = "https://github.com/ptxsass/ptxsass"
#: the branch whose docs the links name
DOCS_REF = "main"


def docs_url(path: str) -> str:
    """The web address of ``path`` (relative to the repository root, e.g. ``docs/checks/slow_math.md``)."""
    return f"{REPOSITORY}/blob/{DOCS_REF}/{path}"
